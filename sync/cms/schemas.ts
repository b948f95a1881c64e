import { z } from 'zod';
import type { Locale } from '../../src/locale.js';
import { checkPublicUrl } from '../../src/lib/safe-url.js';
import { normalizeIso } from '../../src/lib/time.js';
import type { ArticleRecord, RejectedRecord, SectionRecord } from './types.js';

/**
 * What the CMS sends (docs/specs/cms-contract.md) and how one raw record becomes an internal record.
 * Envelopes are all-or-nothing (the adapter fails the request); records are judged one by one
 * so that one broken article does not hold back the rest of its page.
 */

// Upper bounds that no real record reaches; past them a record is garbage, not content.
export const FIELD_LIMITS = {
  id: 200,
  name: 500,
  description: 10_000,
  status: 50,
  title: 1000,
  excerpt: 10_000,
  body: 2_000_000,
  author: 500,
  url: 2048,
  alt: 2000,
  credit: 500,
} as const;

const SLUG = /^[A-Za-z0-9._~-]{1,200}$/;
// "." and ".." are removed from a URL path by every client (/articles/. is the list), and
// prototype keys break partners who index a copy by slug in a plain object.
const RESERVED_SLUGS = new Set(['.', '..', '__proto__', 'constructor', 'prototype']);

const cmsId = z.string().min(1).max(FIELD_LIMITS.id);
const slug = z
  .string()
  .regex(SLUG, 'not URL-safe (1 to 200 of A-Z a-z 0-9 . _ ~ -)')
  .refine((s) => !RESERVED_SLUGS.has(s), 'reserved (., .., or a JavaScript prototype key)');
const timestamp = z
  .string()
  .max(64)
  .transform((value, ctx) => {
    const normalized = normalizeIso(value);
    if (normalized === undefined) {
      ctx.addIssue({ code: 'custom', message: 'not an ISO 8601 timestamp with offset' });
      return z.NEVER;
    }
    return normalized;
  });
// The article's own address: partners link back to it, so an article without a safe one is
// rejected (skipped, with the reason in the run's log) rather than served without a link.
// What is stored is the URL as a browser resolves it (src/lib/safe-url.ts).
const httpUrl = z
  .string()
  .max(FIELD_LIMITS.url)
  .transform((value, ctx) => {
    const verdict = checkPublicUrl(value);
    if (verdict.ok) return verdict.href;
    ctx.addIssue({ code: 'custom', message: verdict.reason });
    return z.NEVER;
  });

// Image addresses are optional decoration: an unsafe one is dropped, not the article. An
// image whose own `url` is unsafe (or empty) becomes no image at all; an unsafe `credit_url`
// or `source_url` becomes "" (the contract keeps all five fields strings: "" means no link).
const optionalUrl = z
  .string()
  .max(FIELD_LIMITS.url)
  .transform((value) => {
    const verdict = checkPublicUrl(value);
    return verdict.ok ? verdict.href : '';
  });

const rawImage = z.object({
  url: optionalUrl,
  alt: z.string().max(FIELD_LIMITS.alt),
  credit: z.string().max(FIELD_LIMITS.credit),
  credit_url: optionalUrl,
  source_url: optionalUrl,
});

const rawSection = z.object({
  id: cmsId,
  slug,
  name: z.string().min(1).max(FIELD_LIMITS.name),
  description: z.string().max(FIELD_LIMITS.description).nullable(),
  active: z.boolean(),
  position: z.int(),
  updated_at: timestamp,
});

function rawArticleSchema(locale: Locale) {
  return z.object({
    id: cmsId,
    locale: z.literal(locale),
    slug,
    status: z.string().min(1).max(FIELD_LIMITS.status),
    title: z.string().min(1).max(FIELD_LIMITS.title),
    excerpt: z.string().max(FIELD_LIMITS.excerpt),
    body_markdown: z.string().max(FIELD_LIMITS.body),
    section_slug: slug.nullable(),
    author: z.string().max(FIELD_LIMITS.author).nullable(),
    image: rawImage.nullable(),
    published_at: timestamp.nullable(),
    updated_at: timestamp,
    url: httpUrl,
  });
}

// Built once per locale: the locale a record must carry is the one that was asked for.
const rawArticleByLocale = { en: rawArticleSchema('en'), zh: rawArticleSchema('zh') };

export const articlePageEnvelope = z.object({
  data: z.array(z.unknown()),
  meta: z.object({
    page: z.int().min(1),
    per_page: z.int().min(1),
    total: z.int().min(0),
    pages: z.int().min(0),
  }),
});
export type ArticlePageEnvelope = z.infer<typeof articlePageEnvelope>;

export const sectionsEnvelope = z.object({ data: z.array(z.unknown()) });

export type ParseResult<T> = { ok: true; record: T } | { ok: false; rejected: RejectedRecord };

export function parseArticle(raw: unknown, locale: Locale): ParseResult<ArticleRecord> {
  const result = rawArticleByLocale[locale].safeParse(raw, { error: issueMessage });
  if (!result.success) {
    return { ok: false, rejected: { cmsId: readId(raw), status: readStatus(raw), reason: describeIssues(result.error) } };
  }
  const r = result.data;
  const record: ArticleRecord = {
    cmsId: r.id,
    locale,
    slug: r.slug,
    status: r.status,
    title: r.title,
    excerpt: r.excerpt,
    body: r.body_markdown,
    sectionSlug: r.section_slug,
    author: r.author ?? '',
    image: r.image && r.image.url !== '' ? {
      url: r.image.url,
      alt: r.image.alt,
      credit: r.image.credit,
      creditUrl: r.image.credit_url,
      sourceUrl: r.image.source_url,
    } : null,
    publishedAt: r.published_at,
    updatedAt: r.updated_at,
    url: r.url,
  };
  return { ok: true, record };
}

export function parseSection(raw: unknown, locale: Locale): ParseResult<SectionRecord> {
  const result = rawSection.safeParse(raw, { error: issueMessage });
  if (!result.success) return { ok: false, rejected: { cmsId: readId(raw), status: null, reason: describeIssues(result.error) } };
  const r = result.data;
  return {
    ok: true,
    record: {
      cmsId: r.id,
      locale,
      slug: r.slug,
      name: r.name,
      description: r.description,
      active: r.active,
      position: r.position,
      updatedAt: r.updated_at,
    },
  };
}

/** Validates with the short messages used in rejection reasons; returns the data or a reason. */
export function parseEnvelope<T>(
  schema: z.ZodType<T>,
  value: unknown,
): { ok: true; data: T } | { ok: false; reason: string } {
  const result = schema.safeParse(value, { error: issueMessage });
  return result.success ? { ok: true, data: result.data } : { ok: false, reason: describeIssues(result.error, 'response') };
}

/** One line naming each failing field once: `published_at: not an ISO ...; title: expected string`. */
export function describeIssues(error: z.ZodError, root = 'record'): string {
  const byPath = new Map<string, string>();
  for (const issue of error.issues) {
    const path = issue.path.length === 0 ? root : issue.path.map(String).join('.');
    if (!byPath.has(path)) byPath.set(path, issue.message);
  }
  const line = [...byPath].map(([path, message]) => `${path}: ${message}`).join('; ');
  return line.length > 500 ? `${line.slice(0, 497)}...` : line;
}

function readId(raw: unknown): string | null {
  return readString(raw, 'id', FIELD_LIMITS.id);
}

// Read as the schema reads it: a status the schema would refuse is no status at all.
function readStatus(raw: unknown): string | null {
  return readString(raw, 'status', FIELD_LIMITS.status);
}

function readString(raw: unknown, field: string, maxLength: number): string | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const value = (raw as Record<string, unknown>)[field];
  return typeof value === 'string' && value.length > 0 && value.length <= maxLength ? value : null;
}

// zod's defaults ("Invalid input: expected string, received number") are long for a log line.
function issueMessage(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'missing';
      return `expected ${issue.expected === 'int' ? 'integer' : issue.expected}, got ${typeOf(issue.input)}`;
    case 'too_big':
      return issue.origin === 'string' ? `longer than ${issue.maximum} characters` : `greater than ${issue.maximum}`;
    case 'too_small':
      if (issue.origin === 'string') return issue.minimum === 1 ? 'empty' : `shorter than ${issue.minimum} characters`;
      return `less than ${issue.minimum}`;
    case 'invalid_value':
      return `expected ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}, got ${shortJson(issue.input)}`;
    default:
      return undefined;
  }
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && !Number.isInteger(value)) return 'non-integer number';
  return typeof value;
}

function shortJson(value: unknown): string {
  // A nested value is named by its type: a CMS can send one deep enough to overflow
  // JSON.stringify, which would fail the whole run instead of rejecting the record.
  if (typeof value === 'object' && value !== null) return typeOf(value);
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 40 ? `${json.slice(0, 37)}...` : json;
}
