import { z } from 'zod';
import { LOCALES } from '../../locale.js';
import { parseIsoToMs } from '../../lib/time.js';

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

export const listQuery = z.object({ locale, page, limit, section, updated_since: updatedSince });
export const changesQuery = z.object({ locale, since, limit: changesLimit });
export const detailQuery = z.object({ locale });
export const categoriesQuery = z.object({ locale });
export const searchQuery = z.object({ locale, q, page, limit, section, highlight });

export type ListQuery = z.output<typeof listQuery>;
export type ChangesQuery = z.output<typeof changesQuery>;
export type SearchQuery = z.output<typeof searchQuery>;
