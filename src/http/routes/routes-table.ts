/*
 * Every endpoint the API answers, once. Express registers its routes from this table
 * (src/http/routes/), the OpenAPI document takes its paths from it (src/http/contract/openapi-operations.ts),
 * and each request is matched against it once, when its context is created
 * (src/http/pipeline/request-log.ts): the fast path, the metrics' `route` label and any per-response hook
 * read that one match from the request context. Adding an endpoint is adding a row here.
 */

export interface Route<P extends string = string> {
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
   * alone (src/http/fast/cacheable.ts). Search is cached too, but only by its route.
   */
  readonly fast: boolean;
}

function route<const P extends string>(path: P, options: { keyed?: boolean; fast?: boolean; name?: string; documented?: boolean } = {}): Route<P> {
  return Object.freeze({
    method: 'GET',
    path,
    name: options.name ?? path,
    openapi: options.documented === false ? undefined : path.replace(/:(\w+)/g, '{$1}'),
    keyed: options.keyed ?? false,
    fast: options.fast ?? false,
  });
}

export const ROUTES = Object.freeze({
  articles: route('/api/v1/articles', { keyed: true, fast: true }),
  article: route('/api/v1/articles/:slug', { keyed: true, fast: true }),
  categories: route('/api/v1/categories', { keyed: true, fast: true }),
  search: route('/api/v1/search', { keyed: true }),
  changes: route('/api/v1/changes', { keyed: true, fast: true }),
  openapi: route('/api/v1/openapi.json'),
  health: route('/health'),
  docs: route('/docs', { documented: false }),
  docsAsset: route('/docs/assets/:name', { name: '/docs', documented: false }),
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
