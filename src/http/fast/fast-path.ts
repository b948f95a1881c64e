import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Catalog } from '../../content/catalog.js';
import type { Clock } from '../../lib/time.js';
import { checkKey, type KeyCheckDeps } from '../pipeline/api-key.js';
import { resolveCached } from '../cache/cacheable.js';
import type { RequestContext } from '../pipeline/context.js';
import { leadingHeaders } from '../pipeline/response-head.js';
import { sendRepresentation, type ResponseCache } from '../cache/representation.js';
import type { z } from 'zod';
import { ARTICLE_SLUG_AT, ROUTES, type Route } from '../endpoints/routes-table.js';
import { SOCKET_CLOSING } from '../server/server-limits.js';
import { TurnEnds } from './turn-ends.js';

export interface FastPathDeps extends KeyCheckDeps {
  catalog: Catalog;
  cache: ResponseCache;
  clock: Clock;
  /** helmet's headers as a flat list (src/http/server/security-headers.ts). */
  security: readonly string[];
}

/**
 * Answers a request from the response cache and returns true; or returns false, having first
 * sent the answers it holds (see below), and Express answers the request.
 */
export type FastPath = ((req: IncomingMessage, res: ServerResponse, context: RequestContext) => boolean) & {
  /** Sends now the answers held for the end of the turn (src/http/fast/turn-ends.ts). */
  readonly flush: () => void;
  /**
   * Sends the answers held before the server lets Node write to a socket itself: a request
   * its parser refused, a CONNECT (src/http/server/server-limits.ts answers both on the socket, in
   * the same turn as the requests read before them on it, so destroying or ending the socket
   * would cut those answers or overtake them).
   */
  readonly attach: (server: Server) => void;
};

/**
 * Answers a repeated request for a cached list, article or section list without entering
 * Express, whose routing alone costs more than the rest of such a request (see
 * docs/benchmarks.md). It answers only the routes the routes table lets it (`fast`,
 * src/http/endpoints/routes-table.ts), matched once in the request context, and does exactly what the
 * route does for a cache hit, through the same key check and rate limit (run once per
 * request, src/http/pipeline/api-key.ts), parameter parsing and cache key (src/http/cache/cacheable.ts),
 * with the same request log (src/app.ts) and the same headers, written in one call
 * (src/http/pipeline/response-head.ts). Anything else (a miss, an error of any kind, another route)
 * returns false and Express handles the request, so every error response still comes from
 * the one error handler. FAST_PATH=off leaves it out (src/app.ts), and then Express answers
 * everything the same way: the HTTP suites run both ways.
 *
 * Its answers leave together at the end of the turn of the event loop (src/http/fast/turn-ends.ts),
 * so nothing slow may run in a turn while they wait. The three kinds of slow work are known
 * here, and each sends them first: a request handed to Express (a query, a search), a view
 * about to be rebuilt after a sync (Catalog.beforeSlowWork), and Node writing to a socket
 * itself (attach).
 */
export function createFastPath(deps: FastPathDeps): FastPath {
  const { catalog, cache, clock, security } = deps;
  const { end, flush } = new TurnEnds();
  catalog.beforeSlowWork(flush);

  const answer = (req: IncomingMessage, res: ServerResponse, context: RequestContext): boolean => {
    const route = context.route;
    if (route === undefined || !route.fast || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
    // The route is known only to decide whether to try; the key is still checked first.
    try {
      const session = checkKey(req, res, deps);
      const now = clock();
      // Every `fast` route has a query schema (src/http/endpoints/routes-table.ts); the key's
      // scope names the cached answer (src/http/cache/cacheable.ts), as in the route.
      const fast = route as Route<string, z.ZodObject>;
      const slug = route === ROUTES.article ? slugOf(req.url!) : undefined;
      const resolved = resolveCached(fast, req, session, catalog, now, slug, context.key?.scope);
      // A change feed request that may wait (`wait`) is Express's: its route decides whether to hold it.
      if (route === ROUTES.changes && (resolved.q as { wait?: number }).wait! > 0) return false;
      const rep = cache.hit(resolved.key);
      if (!rep) return false;
      context.fastPath = true;
      sendRepresentation(req, res, rep, resolved.view.lastModified(now), leadingHeaders(context, security), end);
      return true;
    } catch {
      return false;
    }
  };

  const fastPath = (req: IncomingMessage, res: ServerResponse, context: RequestContext): boolean => {
    if (answer(req, res, context)) return true;
    // Express may take long: what this turn answered leaves first.
    flush();
    return false;
  };
  const attach = (server: Server): void => {
    server.prependListener('clientError', flush);
    server.prependListener('connect', flush);
    server.prependListener(SOCKET_CLOSING, flush);
  };
  return Object.assign(fastPath, { flush, attach });
}

/**
 * The slug of a URL of ROUTES.article, as Express's `:slug` gives it: decoded (a bad escape
 * throws, and Express answers the 400), without the one trailing slash it allows.
 */
function slugOf(url: string): string {
  const query = url.indexOf('?');
  let end = query === -1 ? url.length : query;
  if (url.charCodeAt(end - 1) === 47) end -= 1;
  return decodeURIComponent(url.slice(ARTICLE_SLUG_AT, end));
}
