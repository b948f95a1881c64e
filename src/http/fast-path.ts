import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Catalog } from '../content/catalog.js';
import type { SnapshotStore } from '../db/snapshot-store.js';
import type { KeyVerifier } from '../keys/verifier.js';
import type { Clock } from '../time.js';
import { resolveCategories, resolveChanges, resolveDetail, resolveList } from './cacheable.js';
import { sendRepresentation, type ResponseCache } from './representation.js';

export interface FastPathDeps {
  store: SnapshotStore;
  keys: KeyVerifier;
  catalog: Catalog;
  cache: ResponseCache;
  clock: Clock;
}

const PREFIX = '/api/v1/';

/**
 * Answers a repeated request for a cached list, article or section list without entering
 * Express, whose routing alone costs more than the rest of such a request (measured: the API
 * served cached pages at about half the rate of a bare Express app; see the README's
 * benchmark figures). It does exactly what the route does for a cache hit, through the same
 * key check, parameter parsing and cache key (src/http/cacheable.ts), after the same request
 * log and security headers (src/app.ts). Anything else (a miss, an error of any kind, a path
 * it does not recognise) returns false and Express handles the request from the start, so
 * every error response still comes from the one error handler.
 */
export function createFastPath({ store, keys, catalog, cache, clock }: FastPathDeps) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !req.url?.startsWith(PREFIX)) return false;
    try {
      const query = req.url.indexOf('?');
      const path = req.url.slice(PREFIX.length, query === -1 ? undefined : query);
      const session = store.session();
      const keyId = keys.verify(req.headers['x-api-key'] as string | undefined, session).id;
      const now = clock();
      let resolved;
      if (path === 'articles') resolved = resolveList(req, session, catalog, now);
      else if (path === 'categories') resolved = resolveCategories(req, session, catalog, now);
      else if (path === 'changes') resolved = resolveChanges(req, session, catalog, now);
      else if (path.startsWith('articles/') && path.indexOf('/', 9) === -1 && path.length > 9) {
        resolved = resolveDetail(req, decodeURIComponent(path.slice(9)), session, catalog, now);
      } else return false;
      const rep = cache.get(resolved.key);
      if (!rep) return false;
      // Read by the request log, as Express's res.locals would be.
      (res as ServerResponse & { locals?: object }).locals = { keyId };
      sendRepresentation(req, res, rep, resolved.view.lastModified(now));
      return true;
    } catch {
      return false;
    }
  };
}
