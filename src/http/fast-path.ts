import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Catalog } from '../content/catalog.js';
import type { Clock } from '../time.js';
import { checkKey, type KeyCheckDeps } from './api-key.js';
import { resolveCategories, resolveChanges, resolveDetail, resolveList } from './cacheable.js';
import { contextOf } from './context.js';
import { leadingHeaders } from './response-head.js';
import { sendRepresentation, type ResponseCache } from './representation.js';
import type { TurnEnds } from './turn-ends.js';

export interface FastPathDeps extends KeyCheckDeps {
  catalog: Catalog;
  cache: ResponseCache;
  clock: Clock;
  /** helmet's headers as a flat list (src/http/security-headers.ts). */
  security: readonly string[];
  /** Ends the answers of a turn together (src/http/turn-ends.ts). */
  ends: TurnEnds;
}

const PREFIX = '/api/v1/';

/**
 * Answers a repeated request for a cached list, article or section list without entering
 * Express, whose routing alone costs more than the rest of such a request (see
 * docs/benchmarks.md). It does exactly what the route does for a cache hit, through the same
 * key check and rate limit (run once per request, src/http/api-key.ts), parameter parsing and
 * cache key (src/http/cacheable.ts), with the same request log (src/app.ts) and the same
 * headers, written in one call (src/http/response-head.ts), and it labels the request with
 * the route's own pattern. Its answers leave together at the end of the turn of the event
 * loop (src/http/turn-ends.ts). Anything else (a miss, an error of any kind, a path it does
 * not recognise) returns false and Express handles the request, so every error response
 * still comes from the one error handler.
 */
export function createFastPath(deps: FastPathDeps) {
  const { catalog, cache, clock, security } = deps;
  const { end } = deps.ends;
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = req.url;
    if ((req.method !== 'GET' && req.method !== 'HEAD') || url === undefined || !url.startsWith(PREFIX)) return false;
    const query = url.indexOf('?', PREFIX.length);
    const path = url.slice(PREFIX.length, query === -1 ? undefined : query);
    // The path is looked at only to decide whether to try; the key is still checked first.
    let route: string;
    if (path === 'articles') route = '/api/v1/articles';
    else if (path === 'categories') route = '/api/v1/categories';
    else if (path === 'changes') route = '/api/v1/changes';
    else if (path.length > 9 && path.startsWith('articles/') && path.indexOf('/', 9) === -1) route = '/api/v1/articles/:slug';
    else return false;
    try {
      const session = checkKey(req, res, deps);
      const now = clock();
      const resolved =
        route === '/api/v1/articles'
          ? resolveList(req, session, catalog, now)
          : route === '/api/v1/categories'
            ? resolveCategories(req, session, catalog, now)
            : route === '/api/v1/changes'
              ? resolveChanges(req, session, catalog, now)
              : resolveDetail(req, decodeURIComponent(path.slice(9)), session, catalog, now);
      const rep = cache.hit(resolved.key);
      if (!rep) return false;
      const context = contextOf(res);
      context.route = route;
      sendRepresentation(req, res, rep, resolved.view.lastModified(now), leadingHeaders(context, security), end);
      return true;
    } catch {
      return false;
    }
  };
}
