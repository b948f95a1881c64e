import { z } from 'zod';
import { LOCALES } from '../../locale.js';
import { ERROR_CODES, SERVER_REFUSALS } from './openapi-errors.js';
import { MAX_CHANGES_LIMIT, MAX_PAGE_LIMIT } from '../endpoints/query-schemas.js';

/*
 * The public shapes of every response. Serializers are typed by these, tests validate real
 * responses against them, and the OpenAPI document is generated from them.
 */

const timestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/)
  .meta({ description: 'ISO 8601 in UTC with whole seconds, e.g. `2026-10-20T08:00:00Z`.' });

export const imageSchema = z
  .object({
    url: z.string(),
    alt: z.string(),
    credit: z.string().meta({ description: 'Name of the photographer.' }),
    credit_url: z.string().meta({ description: "Address of the photographer's profile." }),
    source_url: z.string().meta({ description: "Address of the photo's page at the image provider." }),
  })
  .meta({ id: 'Image' });

export const articleSchema = z
  .object({
    slug: z.string(),
    locale: z.enum(LOCALES),
    title: z.string(),
    excerpt: z.string(),
    section: z.object({ slug: z.string(), name: z.string() }),
    author: z.string().meta({ description: 'Display name; `""` when the article has no author.' }),
    image: imageSchema.nullable().meta({ description: '`null` when the article has no image.' }),
    published_at: timestamp,
    updated_at: timestamp,
    url: z.string().meta({ description: 'Public address of the article: link back to it.' }),
  })
  .meta({ id: 'Article' });

export const articleDetailSchema = articleSchema
  .extend({
    body: z.string().meta({
      description:
        'The article body in Markdown, as our editors wrote it: it may hold raw HTML. Render it with raw HTML off ' +
        '(markdown-it: `html: false`, its default) or sanitise the HTML you render (marked does not: use DOMPurify or similar).',
    }),
    body_html: z.string().optional().meta({
      description:
        'Only when `fields` names it: the body rendered to HTML (CommonMark, GitHub tables and strikethrough) and sanitized, ' +
        'safe to insert into a page.',
    }),
    body_text: z.string().optional().meta({
      description: 'Only when `fields` names it: the body as plain text, paragraphs separated by a blank line.',
    }),
  })
  .meta({ id: 'ArticleDetail' });

export const sectionSchema = z
  .object({
    slug: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    article_count: z.number().int().min(0).meta({ description: 'Articles exposed in this section and locale.' }),
  })
  .meta({ id: 'Section' });

const pageMeta = {
  page: z.number().int().min(1),
  limit: z.number().int().min(1).max(MAX_PAGE_LIMIT),
  total: z.number().int().min(0),
  pages: z.number().int().min(0).meta({ description: '`ceil(total / limit)`, 0 when total is 0.' }),
  locale: z.enum(LOCALES),
};

export const articleListSchema = z
  .object({ data: z.array(articleSchema), meta: z.object(pageMeta) })
  .meta({ id: 'ArticleList' });

export const highlightedTextSchema = z
  .object({
    text: z.string().meta({ description: 'Plain text: for the body, Markdown flattened, HTML tags removed, `…` where it was cut. Escape it before inserting it as HTML.' }),
    html: z.string().meta({
      description: '`text` HTML-escaped (`&`, `<`, `>`, `"`, `\'`), each match wrapped in `<mark>`…`</mark>`: safe to insert as HTML as is.',
    }),
    matches: z
      .array(
        z.object({
          start: z.number().int().meta({ description: 'Offset of the match in `text`, in Unicode code points (characters).' }),
          length: z.number().int().meta({ description: 'Length of the match in code points: the whole word it starts.' }),
          word: z.string().meta({ description: 'The query word (one of `meta.words`) that matched here, as a whole word or the start of one.' }),
        }),
      )
      .meta({ description: 'The matched words of `text`, in order; empty when the query matched elsewhere (excerpt, section, author).' }),
  })
  .meta({ id: 'HighlightedText' });

export const highlightsSchema = z
  .object({
    title: highlightedTextSchema.meta({ description: 'The whole title.' }),
    body: highlightedTextSchema.meta({
      description:
        'About 200 characters of the body around its best match (the stretch with the most query words), cut at word ' +
        'boundaries (Chinese: at character boundaries); the start of the body when it has no match.',
    }),
  })
  .meta({ id: 'Highlights' });

export const searchHitSchema = articleSchema
  .extend({
    highlights: highlightsSchema.optional().meta({
      description: 'Where the hit matched (left out with `highlight=false`). The same on every search engine for the same article and query.',
    }),
  })
  .meta({ id: 'SearchHit' });

export const searchResultsSchema = z
  .object({
    data: z.array(searchHitSchema),
    meta: z.object({
      ...pageMeta,
      q: z.string(),
      words: z.array(z.string()).meta({
        description:
          'The words of `q` as searched (lowercased, split, Chinese segmented, at most 10): every hit holds each of them as a ' +
          'whole word or the start of one. Empty when `q` has no word to search.',
      }),
    }),
  })
  .meta({ id: 'SearchResults' });

export const articleResponseSchema = z.object({ data: articleDetailSchema }).meta({ id: 'ArticleResponse' });

export const sectionListSchema = z
  .object({ data: z.array(sectionSchema), meta: z.object({ total: z.number().int().min(0), locale: z.enum(LOCALES) }) })
  .meta({ id: 'SectionList' });

const changeBase = {
  slug: z.string(),
  changed_at: timestamp.meta({ description: 'When the change took effect (UTC, whole seconds).' }),
};

export const changeSchema = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('upsert').meta({ description: 'The article is exposed: add or replace it (fetch the detail again for its body).' }),
      ...changeBase,
      article: articleSchema,
    }),
    z.object({
      type: z.literal('delete').meta({ description: 'The article is no longer exposed: remove it from your copy.' }),
      ...changeBase,
    }),
  ])
  .meta({ id: 'Change' });

export const changeListSchema = z
  .object({
    data: z.array(changeSchema),
    meta: z.object({
      locale: z.enum(LOCALES),
      limit: z.number().int().min(1).max(MAX_CHANGES_LIMIT),
      since: z.string().nullable().meta({ description: 'The cursor this page continues from; null from the beginning.' }),
      next: z.string().meta({ description: 'Opaque cursor: pass it as `since` to continue exactly after this page.' }),
      has_more: z.boolean().meta({ description: 'Whether another page is ready now.' }),
    }),
  })
  .meta({ id: 'ChangeList' });

export const errorSchema = z
  .object({
    error: z.object({
      code: z.string().meta({
        description:
          `Stable, for programs: ${Object.keys(ERROR_CODES).join(', ')}. Each operation lists those it can answer. ` +
          `Before a request reaches an operation, the server itself may refuse it, in this same shape and without ` +
          `X-Request-Id: ${Object.entries(SERVER_REFUSALS).map(([code, status]) => `${status} \`${code}\``).join(', ')}. ` +
          'A fault of ours answers 500 `internal_error`.',
      }),
      message: z.string().meta({ description: 'One English sentence saying what to do.' }),
      param: z.string().optional().meta({ description: 'On invalid_parameter: the parameter at fault.' }),
    }),
  })
  .meta({ id: 'Error' });

const syncRunSchema = z.object({
  kind: z.string().meta({ description: '`full`, `incremental` or `reindex`.' }),
  status: z.enum(['succeeded', 'failed']),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  error: z.string().nullable().meta({ description: 'Why the run failed (at most 200 characters).' }),
});

export const healthSchema = z
  .object({
    status: z.enum(['ok', 'degraded', 'unavailable', 'draining']).meta({
      description:
        '`ok`; `degraded` (still 200) when the snapshot is older than its maximum age, the last sync failed, or the keys database cannot be used (then every /api/v1 request answers 503); `unavailable` (503) when the snapshot cannot be read; `draining` (503) when the process is stopping: it still answers requests until it closes its port, and a balancer should take it out of rotation. The search engine has its own `search.status`.',
    }),
    problems: z.array(z.string()).optional().meta({ description: 'When degraded or draining: why, one sentence each.' }),
    snapshot: z.object({
      locales: z.record(
        z.string(),
        z.object({ synced_at: timestamp, age_seconds: z.number().int(), changed_at: timestamp }),
      ),
      age_seconds: z.number().int().meta({ description: 'Age of the oldest locale: time since its last sync.' }),
      max_age_seconds: z.number().int().meta({ description: 'Past this age the status is `degraded` (SNAPSHOT_MAX_AGE).' }),
      last_sync: z
        .object({ kind: z.string(), finished_at: timestamp, age_seconds: z.number().int() })
        .nullable()
        .meta({ description: 'The last successful sync from the CMS.' }),
      last_attempt: syncRunSchema.nullable().meta({ description: 'The last run that ended, of any kind and result, but a successful --reindex (which reads no CMS).' }),
      last_failure: syncRunSchema.nullable().meta({ description: 'The last failed run, if any (among the last 10,000).' }),
    }).optional(),
    search: z.object({
      engine: z.string(),
      status: z.enum(['ok', 'unavailable']),
      detail: z.string().optional(),
      version: z.string().nullable().optional().meta({ description: 'Meilisearch: the server version, when it could be read.' }),
      indexes: z
        .record(z.string(), z.object({ uid: z.string(), status: z.string(), documents: z.number().int().nullable() }))
        .optional()
        .meta({ description: 'Meilisearch: each locale index, its state and number of documents.' }),
    }),
    feed: z
      .object({
        entries: z.number().int().min(0).meta({ description: 'Rows in the change feed, both locales.' }),
        oldest_delete_at: timestamp.nullable().meta({ description: 'When the oldest retained delete took effect.' }),
      })
      .optional(),
    error: errorSchema.shape.error.optional(),
  })
  .meta({ id: 'Health' });

export type SearchHit = z.output<typeof searchHitSchema>;
export type Article = z.infer<typeof articleSchema>;
export type ArticleDetail = z.infer<typeof articleDetailSchema>;
export type Section = z.infer<typeof sectionSchema>;
export type Health = z.infer<typeof healthSchema>;
export type Change = z.infer<typeof changeSchema>;
