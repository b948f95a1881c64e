import type { z } from 'zod';
import { categoriesQuery, changesQuery, detailQuery, listQuery, searchQuery } from './query-schemas.js';

/*
 * Every endpoint the API answers, declared once: its method, path pattern, name, OpenAPI path,
 * whether it needs a key, whether the fast path may answer it, its query schema, and what is
 * derived from that schema: the part of its response-cache key that comes from the query and
 * the parameters its `Link` header carries. Express registers its routes from this table
 * (src/http/routes/), the OpenAPI document takes its operations' paths, query parameters, key
 * rule and paging from it (src/http/contract/openapi-operations.ts), both paths build their
 * cache keys from it (src/http/cache/cacheable.ts), the Link header keeps its parameters
 * (src/http/cache/page-links.ts), and each request is matched against it once, when its context
 * is created (src/http/pipeline/request-log.ts). Adding a query parameter is adding it to the
 * endpoint's schema (src/http/endpoints/query-schemas.ts): the cache key and the Link header
 * follow by themselves.
 */

export interface Route<P extends string = string, S extends z.ZodObject | undefined = z.ZodObject | undefined> {
  /** HEAD is answered wherever GET is (Express does it for GET routes); the API is read-only. */
  readonly method: 'GET';
  /** Express's path pattern, e.g. `/api/v1/articles/:slug`. */
  readonly path: P;
  /**
   * The stable label of the route: the metrics' `route`, never the raw path (slugs would
   * explode the series). The pattern itself, but for the docs page and its assets, which
   * share `/docs`.
   */
  readonly name: string;
  /** The path in the OpenAPI document (`{slug}`); undefined: not in the document. */
  readonly openapi: string | undefined;
  /** Needs X-API-Key (src/http/pipeline/api-key.ts): everything under /api/v1 but the document. */
  readonly keyed: boolean;
  /**
   * The fast path may answer it from the response cache without entering Express
   * (src/http/fast/fast-path.ts): the four cacheable reads whose cache key comes from the request
   * alone (src/http/cache/cacheable.ts). Search is cached too, but only by its route.
   */
  readonly fast: boolean;
  /** The zod schema its query string is parsed with (src/http/endpoints/parse-query.ts). */
  readonly query: S;
  /** A page of results: its answers carry a `Link` header (src/http/cache/page-links.ts). */
  readonly paged: boolean;
  /**
   * The parameters the `Link` header keeps as the partner sent them: every parameter of the
   * query schema but `page`, which each link sets. Unknown ones are left out.
   */
  readonly linkParams: ReadonlySet<string>;
  /**
   * The part of a response-cache key that comes from the parsed query: every parameter of the
   * schema, in the schema's order, so that a new parameter is in the key without anyone
   * remembering to add it, but those the declaration names in `notInCacheKey` (they change
   * when an answer is sent, not what it holds). Remembered per parsed query (parseQuery returns the same object
   * for a repeated query string), so a repeated request pays a WeakMap lookup.
   */
  readonly cacheKey: (parsed: object) => string;
  /** The parameters left out of the cache key (RouteOptions.notInCacheKey). */
  readonly notInCacheKey: ReadonlySet<string>;
}

interface RouteOptions<S> {
  keyed?: boolean;
  fast?: boolean;
  name?: string;
  documented?: boolean;
  query?: S;
  paged?: boolean;
  /** Parameters that change when the answer is sent, not what it holds (the feed's `wait`). */
  notInCacheKey?: readonly string[];
}

export function declareRoute<const P extends string, S extends z.ZodObject | undefined = undefined>(path: P, options: RouteOptions<S> = {}): Route<P, S> {
  const names = options.query ? Object.keys(options.query.shape) : [];
  const name = options.name ?? path;
  return Object.freeze({
    method: 'GET',
    path,
    name,
    openapi: options.documented === false ? undefined : path.replace(/:(\w+)/g, '{$1}'),
    keyed: options.keyed ?? false,
    fast: options.fast ?? false,
    query: options.query as S,
    paged: options.paged ?? false,
    linkParams: new Set(options.paged ? names.filter((n) => n !== 'page') : []),
    cacheKey: cacheKeyOf(name, names.filter((n) => !options.notInCacheKey?.includes(n))),
    notInCacheKey: new Set(options.notInCacheKey ?? []),
  });
}

function cacheKeyOf(name: string, names: readonly string[]): (parsed: object) => string {
  const known = new WeakMap<object, string>();
  return (parsed) => {
    let key = known.get(parsed);
    if (key === undefined) {
      const values = parsed as Record<string, unknown>;
      // JSON: a value's own `|` or quote cannot run into the next one.
      key = `${name}|${JSON.stringify(names.map((n) => values[n] ?? null))}`;
      known.set(parsed, key);
    }
    return key;
  };
}

export const ROUTES = Object.freeze({
  articles: declareRoute('/api/v1/articles', { keyed: true, fast: true, query: listQuery, paged: true }),
  article: declareRoute('/api/v1/articles/:slug', { keyed: true, fast: true, query: detailQuery }),
  categories: declareRoute('/api/v1/categories', { keyed: true, fast: true, query: categoriesQuery }),
  search: declareRoute('/api/v1/search', { keyed: true, query: searchQuery, paged: true }),
  changes: declareRoute('/api/v1/changes', { keyed: true, fast: true, query: changesQuery, notInCacheKey: ['wait'] }),
  openapi: declareRoute('/api/v1/openapi.json'),
  health: declareRoute('/health'),
  docs: declareRoute('/docs', { documented: false }),
  docsAsset: declareRoute('/docs/assets/:name', { name: '/docs', documented: false }),
});

export const ROUTE_LIST: readonly Route[] = Object.freeze(Object.values(ROUTES));

/** Where the slug starts in a URL of ROUTES.article. */
export const ARTICLE_SLUG_AT = '/api/v1/articles/'.length;

const API = '/api/v1/';
const SLASH = 47;

/**
 * The route Express answers a URL with, or undefined (a 404): the same rules as Express's
 * router (router 2, path-to-regexp 8) on these patterns, which a test holds it to: the path
 * is the URL before `?`, matched as sent (no decoding), without regard to case, with one
 * optional trailing slash; a parameter is one non-empty segment. The method is not looked
 * at: a POST to a route's path is still labelled with the route (Express refuses it, 405).
 *
 * Called once per request, first thing: it allocates nothing unless the path has capitals.
 */
export function routeOf(url: string | undefined): Route | undefined {
  if (url === undefined) return undefined;
  const query = url.indexOf('?');
  let end = query === -1 ? url.length : query;
  // Express's non-strict routing: `/api/v1/articles/` is `/api/v1/articles`.
  if (end > 1 && url.charCodeAt(end - 1) === SLASH) end -= 1;
  return matchPath(url, end) ?? matchFolded(url, end);
}

function matchPath(url: string, end: number): Route | undefined {
  if (url.startsWith(API)) {
    const at = API.length;
    if (is(url, at, end, 'articles')) return ROUTES.articles;
    if (url.startsWith('articles/', at)) return oneSegment(url, ARTICLE_SLUG_AT, end) ? ROUTES.article : undefined;
    if (is(url, at, end, 'categories')) return ROUTES.categories;
    if (is(url, at, end, 'changes')) return ROUTES.changes;
    if (is(url, at, end, 'search')) return ROUTES.search;
    if (is(url, at, end, 'openapi.json')) return ROUTES.openapi;
    return undefined;
  }
  if (is(url, 0, end, '/health')) return ROUTES.health;
  if (is(url, 0, end, '/docs')) return ROUTES.docs;
  if (url.startsWith('/docs/assets/')) return oneSegment(url, '/docs/assets/'.length, end) ? ROUTES.docsAsset : undefined;
  return undefined;
}

// Express matches paths without regard to case: rare, so the copy is made only then.
function matchFolded(url: string, end: number): Route | undefined {
  const path = url.slice(0, end);
  const lower = path.toLowerCase();
  return lower === path ? undefined : matchPath(lower, end);
}

/** url[at, end) is exactly `word`. */
function is(url: string, at: number, end: number, word: string): boolean {
  return end - at === word.length && url.startsWith(word, at);
}

/** url[at, end) is one non-empty path segment. */
function oneSegment(url: string, at: number, end: number): boolean {
  if (end <= at) return false;
  const slash = url.indexOf('/', at);
  return slash === -1 || slash >= end;
}
