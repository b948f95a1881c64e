import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../../errors.js';
import type { Locale } from '../../locale.js';
import { projectRoot } from '../../paths.js';

const localeEntry = z.object({
  settings: z.record(z.string(), z.unknown()).default({}),
  searchLocales: z.array(z.string()).default([]),
});

const fileSchema = z.object({
  settings: z.record(z.string(), z.unknown()),
  locales: z.object({ en: localeEntry, zh: localeEntry }),
  batchSize: z.number().int().min(1).max(10_000).default(1000),
  taskTimeoutMs: z.number().int().min(1000).default(120_000),
});

export interface MeiliIndexConfig {
  /** Settings for one locale's index: the shared ones with the locale's merged over them. */
  settings(locale: Locale): Record<string, unknown>;
  /** `locales` sent with each search of that locale (`cmn` for Chinese). */
  searchLocales(locale: Locale): string[];
  batchSize: number;
  taskTimeoutMs: number;
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
    settings: (locale) => merge(parsed.settings, parsed.locales[locale].settings),
    searchLocales: (locale) => parsed.locales[locale].searchLocales,
    batchSize: parsed.batchSize,
    taskTimeoutMs: parsed.taskTimeoutMs,
  };
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
