import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../../errors.js';
import type { Locale } from '../../locale.js';
import { projectRoot } from '../../lib/paths.js';
import { BODY_FIELDS } from './documents.js';

/** The largest batch this service sends: 90% of Meilisearch's default payload limit (100 MB). */
export const MAX_BATCH_BYTES = 90_000_000;

const localeEntry = z.object({
  settings: z.record(z.string(), z.unknown()).default({}),
  searchLocales: z.array(z.string()).default([]),
});

const fileSchema = z.object({
  settings: z.record(z.string(), z.unknown()),
  locales: z.object({ en: localeEntry, zh: localeEntry }),
  batchSize: z.number().int().min(1).max(10_000).default(1000),
  // Meilisearch refuses a body past its http_payload_size_limit (100 MB by default) with 413
  // payload_too_large: batches stay well under it, whatever the documents weigh.
  batchBytes: z.number().int().min(1_000_000).max(MAX_BATCH_BYTES).default(20_000_000),
  taskTimeoutMs: z.number().int().min(1000).default(120_000),
  taskTimeoutMsPerMb: z.number().int().min(0).default(5_000),
  uploadTimeoutMsPerMb: z.number().int().min(0).default(2_000),
});


export interface MeiliIndexConfig {
  /** Settings for one locale's index: the shared ones with the locale's merged over them. */
  settings(locale: Locale): Record<string, unknown>;
  /** `locales` sent with each search of that locale (`cmn` for Chinese). */
  searchLocales(locale: Locale): string[];
  /** Documents per upload, at most. */
  batchSize: number;
  /** Serialized bytes per upload, at most (a single larger document goes alone). */
  batchBytes: number;
  /** How long the worker waits for a task that carries no documents (index, settings, swap). */
  taskTimeoutMs: number;
  /** Added to taskTimeoutMs per megabyte of documents waited for: big rebuilds get longer. */
  taskTimeoutMsPerMb: number;
  /** Added to the worker's request timeout per megabyte of an upload. */
  uploadTimeoutMsPerMb: number;
}

/**
 * Reads meilisearch.config.json, the operator's control over the indexes. A file that does not
 * parse stops the worker or the API with a message naming the file and the field.
 */
export function loadMeiliIndexConfig(path = join(projectRoot(), 'meilisearch.config.json')): MeiliIndexConfig {
  let parsed: z.output<typeof fileSchema>;
  try {
    parsed = fileSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
  } catch (error) {
    const detail =
      error instanceof z.ZodError
        ? error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')
        : (error as Error).message;
    throw new ConfigError(`Invalid meilisearch.config.json: ${detail}`);
  }
  return {
    settings: (locale) => withBodyParts(merge(parsed.settings, parsed.locales[locale].settings)),
    searchLocales: (locale) => parsed.locales[locale].searchLocales,
    batchSize: parsed.batchSize,
    batchBytes: parsed.batchBytes,
    taskTimeoutMs: parsed.taskTimeoutMs,
    taskTimeoutMsPerMb: parsed.taskTimeoutMsPerMb,
    uploadTimeoutMsPerMb: parsed.uploadTimeoutMsPerMb,
  };
}

/**
 * `body` in searchableAttributes stands for every body part (`body`, `body_2`, ...: see
 * documents.ts), in order at its place: long bodies are sent in parts so that each stays under
 * the engine's 65,536 positions per attribute.
 */
function withBodyParts(settings: Record<string, unknown>): Record<string, unknown> {
  const searchable = settings['searchableAttributes'];
  if (!Array.isArray(searchable) || !searchable.includes('body')) return settings;
  return { ...settings, searchableAttributes: searchable.flatMap((a) => (a === 'body' ? [...BODY_FIELDS] : [a])) };
}

function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] =
      isPlainObject(current) && isPlainObject(value) ? merge(current, value) : value;
  }
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
