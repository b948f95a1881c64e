import { z } from 'zod';
import { LOCALES } from '../../locale.js';
import { parseIsoToMs } from '../../lib/time.js';
import { InvalidParameterError } from '../../errors.js';

/*
 * The query parameters of each endpoint, as zod schemas: the routes parse requests with them
 * and src/http/contract/openapi.ts documents them from the same objects, so the two cannot drift.
 * Each message is the sentence a partner's developer reads in the 400 response.
 */

/** A whole number written as plain digits (no sign, no decimal point, no exponent). */
function digits(name: string, min: number, max: number, rule: string) {
  const message = `${name} must be ${rule}, written as plain digits.`;
  return z
    .string()
    .regex(/^[0-9]+$/, { error: message })
    .transform(Number)
    // int() has its own range check (safe integers): it needs the same message as min/max.
    .pipe(z.number().int({ error: message }).min(min, { error: message }).max(max, { error: message }));
}

const locale = z
  .enum(LOCALES, { error: 'locale must be "en" or "zh".' })
  .default('en')
  .meta({ description: 'Language of the content: `en` or `zh`.' });

const page = digits('page', 1, Number.MAX_SAFE_INTEGER, 'a whole number from 1')
  .default(1)
  .meta({ description: '1-based page number. A page past the last one returns an empty `data` array.' });

/** The largest `limit` of a list or search page, and of a change feed page. */
export const MAX_PAGE_LIMIT = 50;
export const MAX_CHANGES_LIMIT = 100;

const limit = digits('limit', 1, MAX_PAGE_LIMIT, `a whole number from 1 to ${MAX_PAGE_LIMIT}`)
  .default(20)
  .meta({ description: `Items per page, 1 to ${MAX_PAGE_LIMIT}.` });

const MAX_SECTION = 100;
const section = z
  .string()
  .refine((s) => s.length <= MAX_SECTION, { error: `section must be at most ${MAX_SECTION} characters long: give a section slug from /api/v1/categories.` })
  .optional()
  .meta({
    // No `examples`: Swagger UI's "Try it out" fills a parameter with its example, and an
    // optional filter filled in by default would narrow (often empty) the answer a partner
    // tries first. The description shows a value instead.
    description: `A section slug (see /api/v1/categories), e.g. \`fiber-lasers\`, at most ${MAX_SECTION} characters. An unknown, inactive or empty section gives an empty list.`,
    // The refine above is not visible to the JSON Schema: the document states the limit itself.
    maxLength: MAX_SECTION,
  });

const MAX_Q = 200;
const q = z
  .string({ error: 'q is required: give a search term of 2 to 200 characters.' })
  .trim()
  .refine((s) => [...s].length >= 2, { error: 'q must be at least 2 characters long (after trimming spaces).' })
  .refine((s) => [...s].length <= MAX_Q, { error: `q must be at most ${MAX_Q} characters long.` })
  .meta({
    description:
      'Search term, 2 to 200 characters (Unicode code points, so `激光` counts 2), trimmed. It is split into words ' +
      '(Chinese text into Chinese words); case and punctuation, search operators among them (quotes, `-`, `*`, ' +
      'parentheses), are ignored, and operator words (`AND`, `OR`, `NOT`, `NEAR`) are searched as plain words; repeated ' +
      'words count once, one-character words (other than Chinese characters) are ignored, and only the first 10 words ' +
      'are used. ' +
      'Every word must match, as a whole word or the start of one. A term left with no word finds nothing. Results are ' +
      'ranked by relevance (a match in the title counts most), ties newest first; when a term matches more than a few ' +
      'thousand articles, the newest of them are ranked by relevance and the older ones follow newest first (the total ' +
      'is always exact). Search may answer 503 `search_busy` with `Retry-After` when it is at capacity.',
    examples: ['fiber laser'],
    // The refines above are not visible to the JSON Schema (which also counts code points).
    minLength: 2,
    maxLength: MAX_Q,
  });

const UPDATED_SINCE_RULE =
  'updated_since must be an ISO 8601 date-time with an offset, e.g. 2026-10-20T08:00:00Z or 2026-10-20T16:00:00%2B08:00 (a + in a query string must be sent as %2B).';
const updatedSince = z
  .string()
  // An unencoded "+08:00" arrives as " 08:00" (a + in a query string means a space).
  .transform((v) => parseIsoToMs(v.replace(/(\d) (\d{2}:?\d{2})$/, '$1+$2')))
  .pipe(z.number({ error: UPDATED_SINCE_RULE }))
  .optional()
  .meta({
    description:
      'Only articles whose `updated_at` is at or after this instant: ISO 8601 with any offset (`Z`, `+08:00`), ' +
      'e.g. `2026-10-20T08:00:00Z`; whole seconds count.',
    // Parsed into epoch milliseconds inside the API; partners send the text, which is what the
    // document must show (its output type would be a number). No `examples`: see section's.
    type: 'string',
    format: 'date-time',
    // A date-time is at most 35 characters or so; a longer value fails its parse (400).
    maxLength: 64,
  });

const since = z.string().optional().meta({
  description:
    'A cursor: the `meta.next` of an earlier answer. Omitted: from the beginning (the whole exposed catalogue plus the retained deletes).',
  // Cursors are about 40 characters; a longer value is not one (400 invalid_cursor).
  maxLength: 100,
});

const changesLimit = digits('limit', 1, MAX_CHANGES_LIMIT, `a whole number from 1 to ${MAX_CHANGES_LIMIT}`)
  .default(MAX_CHANGES_LIMIT)
  .meta({ description: `Changes per page, 1 to ${MAX_CHANGES_LIMIT}.` });

const highlight = z
  .enum(['true', 'false'], { error: 'highlight must be "true" or "false".' })
  .default('true')
  .meta({
    description:
      'Whether each hit carries `highlights`: its title and an excerpt of about 200 characters of its body around the ' +
      'best match, with the words that matched marked (as offsets, and as HTML-escaped text with `<mark>` tags). ' +
      '`false` leaves them out (a smaller answer).',
  });

/** An instant with an offset, parsed to epoch ms, for the published_* bounds. */
function instant(name: string, description: string) {
  const rule = `${name} must be an ISO 8601 date-time with an offset, e.g. 2026-10-20T08:00:00Z or 2026-10-20T16:00:00%2B08:00 (a + in a query string must be sent as %2B).`;
  return z
    .string()
    .transform((v) => parseIsoToMs(v.replace(/(\d) (\d{2}:?\d{2})$/, '$1+$2')))
    .pipe(z.number({ error: rule }))
    .optional()
    // A date-time is at most 35 characters or so; a longer value fails its parse (400).
    .meta({ description, type: 'string', format: 'date-time', maxLength: 64 });
}

const publishedAfter = instant(
  'published_after',
  'Only articles published at or after this instant (ISO 8601 with any offset, e.g. `2026-10-20T08:00:00Z`; whole seconds count). ' +
    'With `published_before`, a range: it must be earlier.',
);
const publishedBefore = instant(
  'published_before',
  'Only articles published strictly before this instant (ISO 8601 with any offset, e.g. `2026-10-21T00:00:00%2B08:00`).',
);

/**
 * published_after not earlier than published_before is a 400 naming published_after. Checked
 * after the schema (an object-level refine would stop the schema being extended) by the routes
 * that read the bounds; an invalid range is never cached, so the fast path cannot answer it.
 */
export function checkPublishedRange(q: { published_after?: number | undefined; published_before?: number | undefined }): void {
  if (q.published_after !== undefined && q.published_before !== undefined && q.published_after >= q.published_before) {
    throw new InvalidParameterError('published_after', 'published_after must be earlier than published_before.');
  }
}

export const LIST_ORDERS = ['newest', 'oldest'] as const;
export const SEARCH_ORDERS = ['relevance', 'newest', 'oldest'] as const;

const listOrder = z
  .enum(LIST_ORDERS, { error: 'order must be "newest" or "oldest".' })
  .default('newest')
  .meta({ description: '`newest` (newest `published_at` first, ties by slug) or `oldest` (oldest first, ties by slug).' });

const searchOrder = z
  .enum(SEARCH_ORDERS, { error: 'order must be "relevance", "newest" or "oldest".' })
  .default('relevance')
  .meta({
    description:
      '`relevance` (most relevant first, ties by newest), `newest` (newest `published_at` first, ties by slug) or ' +
      '`oldest` (oldest first, ties by slug).',
  });

/** The fields of an `Article`, in the order an answer holds them. */
export const ARTICLE_FIELDS = ['slug', 'locale', 'title', 'excerpt', 'section', 'author', 'image', 'published_at', 'updated_at', 'url'] as const;
export const SEARCH_FIELDS = [...ARTICLE_FIELDS, 'highlights'] as const;
export const DETAIL_FIELDS = [...ARTICLE_FIELDS, 'body', 'body_html', 'body_text'] as const;

/**
 * `fields`: the names the answer's items hold besides `slug`, given comma-separated; parsed
 * into the allowed names in their usual order (so `title,url` and `url,title` are one answer and
 * one cache entry). An empty element, an unknown name or a name given twice is a 400 that lists
 * the names allowed on this endpoint.
 */
function fields<const N extends string>(allowed: readonly N[]) {
  const known = new Set<string>(allowed);
  const rule = `fields must be a comma-separated list of distinct names among ${allowed.join(', ')} (slug is always included).`;
  return z
    .string()
    .transform((value, ctx): N[] => {
      const seen = new Set<string>();
      for (const name of value.split(',')) {
        const problem = name === '' ? 'has an empty name' : !known.has(name) ? `names an unknown field "${name.slice(0, 40)}"` : seen.has(name) ? `names ${name} twice` : undefined;
        if (problem) {
          ctx.addIssue({ code: 'custom', message: `fields ${problem}: ${rule}` });
          return z.NEVER;
        }
        seen.add(name);
      }
      return allowed.filter((n) => seen.has(n));
    })
    .optional()
    .meta({
      description:
        `The fields each item holds besides \`slug\`, comma-separated, among: ${allowed.map((n) => `\`${n}\``).join(', ')}. ` +
        'They come in the usual order whatever the order given. Omitted: every field, as without it.',
      type: 'string',
      // The longest list that can be valid: every name once.
      maxLength: allowed.join(',').length,
    });
}

export const listQuery = z.object({
  locale,
  page,
  limit,
  section,
  updated_since: updatedSince,
  published_after: publishedAfter,
  published_before: publishedBefore,
  order: listOrder,
  fields: fields(ARTICLE_FIELDS),
});
/** The change feed's `wait` (src/http/routes/feed-wait.ts): the contract's 0 to 60 seconds. */
export const MAX_WAIT_SECONDS = 60;
const wait = digits('wait', 0, MAX_WAIT_SECONDS, `a whole number of seconds from 0 to ${MAX_WAIT_SECONDS}`)
  .default(0)
  .meta({
    description: `When nothing follows \`since\`, wait up to this many seconds (0 to ${MAX_WAIT_SECONDS}) for the next change and answer within one second of it becoming visible; the empty page, with the same \`next\`, when none comes. Answered at once when changes are already there. At most 2 waiting requests per key: a third is answered at once.`,
  });

export const changesQuery = z.object({ locale, since, limit: changesLimit, wait, fields: fields(ARTICLE_FIELDS) });
export const detailQuery = z.object({ locale, fields: fields(DETAIL_FIELDS) });
export const categoriesQuery = z.object({ locale });
export const searchQuery = z.object({
  locale,
  q,
  page,
  limit,
  section,
  highlight,
  published_after: publishedAfter,
  published_before: publishedBefore,
  order: searchOrder,
  fields: fields(SEARCH_FIELDS),
});

export type ListQuery = z.output<typeof listQuery>;
export type ChangesQuery = z.output<typeof changesQuery>;
export type SearchQuery = z.output<typeof searchQuery>;
export type DetailQuery = z.output<typeof detailQuery>;
export type ListOrder = (typeof LIST_ORDERS)[number];
export type SearchOrder = (typeof SEARCH_ORDERS)[number];
