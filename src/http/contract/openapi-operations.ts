import { z } from 'zod';
import type { OperationId } from '../../error-catalogue.js';
import {
  articleListExample,
  articleResponseExample,
  changeListExample,
  healthExample,
  healthUnavailableExample,
  openApiExample,
  searchResultsExample,
  sectionListExample,
} from './openapi-examples.js';
import {
  articleListSchema,
  articleResponseSchema,
  changeListSchema,
  healthSchema,
  searchResultsSchema,
  sectionListSchema,
} from './response-schemas.js';
import { ROUTES, type Route } from '../endpoints/routes-table.js';

/*
 * The API's operations, one entry each: src/http/contract/openapi.ts turns an entry into a complete
 * OpenAPI operation (parameters, security, response headers, 304, error codes, examples).
 * Adding an endpoint to the document is adding an entry here; its path, query parameters, key
 * rule and paging come from its declaration in the routes table (src/http/endpoints/routes-table.ts).
 */

export interface OperationSpec {
  path: string;
  /** Also the operation's name in the error catalogue (src/error-catalogue.ts), which lists its error codes. */
  operationId: OperationId;
  tag: 'Articles' | 'Sections' | 'Search' | 'Changes' | 'Service';
  summary: string;
  description: string;
  /** The zod schema the route parses its query with. */
  query?: z.ZodObject;
  pathParams?: { name: string; description: string; example: string; maxLength?: number }[];
  /** The success body: a registered response schema (a `meta({ id })`) or a plain JSON Schema. */
  ok: { schema: z.ZodType | Record<string, unknown>; description: string; example: unknown };
  /** Needs X-API-Key: adds the security requirement and the key and rate errors. */
  keyed: boolean;
  /** Answered through sendRepresentation: cache headers, validators, conditional requests, 304. */
  cached: boolean;
  /** A page of results: Link header with next/prev/first/last. */
  paged?: boolean;
  /** Other documented answers, e.g. the 503 of /health, which has its own body. */
  more?: Record<string, { description: string; schema: z.ZodType; example: unknown }>;
  /** Response headers of the success answer only (no validators, no key). */
  okHeaders?: string[];
}

const slug = {
  name: 'slug',
  description: 'Article slug, matched exactly (case included) within the requested locale: take one from the list.',
  // "Try it out" sends it as is: an article of the demo's sample data (data/sample/en.json),
  // so that the demo answers with a real article.
  example: 'lumora-photonics-q3-results',
  // Not enforced: a longer slug names no article (404). Bounds what a client or gateway accepts.
  maxLength: 200,
};

type OwnSpec = Omit<OperationSpec, 'path' | 'query' | 'keyed' | 'paged'>;

/** An operation of a declared route: what the routes table says of it is taken from there. */
function operation(route: Route, spec: OwnSpec): OperationSpec {
  return { ...spec, path: route.openapi!, query: route.query, keyed: route.keyed, paged: route.paged };
}

export const OPERATIONS: OperationSpec[] = [
  operation(ROUTES.articles, {
    operationId: 'listArticles',
    tag: 'Articles',
    summary: 'List published articles, newest first',
    description:
      'Published articles of one locale, newest `published_at` first (ties by slug). Offset pages shift when ' +
      'articles are published: to keep a copy of the catalogue, read the change feed (`GET /api/v1/changes`) instead. ' +
      'Follow the `Link` header to page without building URLs.',
    ok: { schema: articleListSchema, description: 'A page of articles.', example: articleListExample },
    cached: true,
  }),
  operation(ROUTES.article, {
    operationId: 'getArticle',
    tag: 'Articles',
    summary: 'Get one article with its Markdown body',
    description: 'The list fields plus `body`, the article in Markdown. Link back to `url` wherever you show it.',
    pathParams: [slug],
    ok: { schema: articleResponseSchema, description: 'The article.', example: articleResponseExample },
    cached: true,
  }),
  operation(ROUTES.categories, {
    operationId: 'listCategories',
    tag: 'Sections',
    summary: 'List active sections in editorial order',
    description: 'Every active section of the locale with the number of articles you can get in it.',
    ok: { schema: sectionListSchema, description: 'The sections.', example: sectionListExample },
    cached: true,
  }),
  operation(ROUTES.search, {
    operationId: 'searchArticles',
    tag: 'Search',
    summary: 'Search published articles, most relevant first',
    description:
      'Every word of `q` must match, as a whole word or the start of one; Chinese text is split into words. ' +
      'Ties by newest `published_at`.',
    ok: { schema: searchResultsSchema, description: 'A page of results.', example: searchResultsExample },
    cached: true,
  }),
  operation(ROUTES.changes, {
    operationId: 'listChanges',
    tag: 'Changes',
    summary: 'Read the change feed: every change in what partners see, including takedowns',
    description:
      'Compacted and cursor-paged: each slug appears at most once, at its latest change, in feed order. Without ' +
      '`since` it is the whole exposed catalogue (as upserts) plus the retained deletes; with `since` (a previous ' +
      "answer's `meta.next`) it is every slug whose exposure changed after that cursor. Apply upserts (fetch the " +
      'detail again for the body) and deletes, store `next`, poll. On `invalid_cursor`, start again without `since`. ' +
      'With `wait=N` (1 to 60) a request that finds nothing after `since` is held until the next change becomes visible ' +
      '(answered within one second of it) or N seconds pass (then the empty page, with the same `next`); a waiting request ' +
      'counts once against the rate limit, and a key may have 2 waiting (a third is answered at once). Allow your HTTP ' +
      'client a read timeout of N + 10 seconds.',
    ok: { schema: changeListSchema, description: 'A page of changes.', example: changeListExample },
    cached: true,
  }),
  operation(ROUTES.health, {
    operationId: 'getHealth',
    tag: 'Service',
    summary: 'Service health (no key)',
    description: "For operators and monitors: the snapshot's age per locale, the last sync and the search engine's state.",
    ok: { schema: healthSchema, description: 'The snapshot is readable.', example: healthExample },
    cached: false,
    okHeaders: ['CacheControlNoStore'],
    more: {
      '503': {
        description: 'The snapshot cannot be read, or has never been synced (`unavailable`); or the process is stopping (`draining`), still answering requests until it closes its port.',
        schema: healthSchema,
        example: healthUnavailableExample,
      },
    },
  }),
  operation(ROUTES.openapi, {
    operationId: 'getOpenApi',
    tag: 'Service',
    summary: 'This OpenAPI 3.1 document (no key)',
    description: 'Generate a client from it (see the README: openapi-typescript and openapi-fetch).',
    ok: {
      schema: { type: 'object', description: 'An OpenAPI 3.1 document.', additionalProperties: true },
      description: 'The document.',
      example: openApiExample,
    },
    cached: true,
  }),
];
