import express from 'express';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { Catalog } from './content/catalog.js';
import type { SnapshotStore } from './db/snapshot-store.js';
import { requireApiKey, type KeyCheckDeps } from './http/api-key.js';
import { errorHandler, onlyReads, unknownPath } from './http/error-handler.js';
import { createFastPath } from './http/fast-path.js';
import { RateLimiter, type RateLimitSettings } from './http/rate-limit.js';
import { ResponseCache } from './http/representation.js';
import { securityHeaders } from './http/security-headers.js';
import { requestLog, type ResponseHook } from './http/request-log.js';
import { contentRoutes } from './http/routes/content.js';
import { metaRoutes } from './http/routes/meta.js';
import { KeyVerifier } from './keys/verifier.js';
import type { Logger } from './logger.js';
import type { SearchEngine } from './search/engine.js';
import { systemClock, type Clock } from './time.js';

export interface AppDeps {
  store: SnapshotStore;
  engine: SearchEngine;
  logger: Logger;
  clock?: Clock;
  responseCacheBytes?: number;
  /** Per-key request rates (default: off, as in tests that do not test them). */
  rateLimit?: Omit<RateLimitSettings, 'processes'>;
  /** API processes on this host (WEB_CONCURRENCY): each enforces its share of every rate. */
  processes?: number;
  /** Called once per response, after its log line (metrics). */
  onResponse?: ResponseHook;
}

/** The listener, and the parts other modules report on (metrics). */
export type App = RequestListener & { limiter: RateLimiter };

/**
 * Builds the API as a request listener; never listens (src/server.ts does, tests pass it to
 * their own server). Every request gets its context and log line and the security headers
 * first, then is answered from the response cache when it can be (src/http/fast-path.ts), else
 * by Express.
 */
export function createApp(deps: AppDeps): App {
  const clock = deps.clock ?? systemClock;
  const catalog = new Catalog();
  const cache = new ResponseCache(deps.responseCacheBytes ?? 64 * 1024 * 1024);
  const limiter = new RateLimiter({ perMinute: 0, burstSeconds: 1, ...deps.rateLimit, processes: deps.processes ?? 1 });
  const keyCheck: KeyCheckDeps = { store: deps.store, keys: new KeyVerifier(), limiter, clock };

  const app = express();
  app.disable('x-powered-by');
  // Validators are computed once per cached body (src/http/representation.ts), not by Express.
  app.set('etag', false);
  app.use(onlyReads);
  app.use(metaRoutes({ store: deps.store, engine: deps.engine, clock }));
  // Everything under /api/v1 but the OpenAPI document (served above) needs a partner key,
  // checked before anything else about the request, the path included.
  app.use('/api/v1', requireApiKey(keyCheck));
  app.use(contentRoutes({ store: deps.store, catalog, engine: deps.engine, cache, clock }));
  app.use(unknownPath);
  app.use(errorHandler(deps.logger));

  const begin = requestLog(deps.logger, deps.onResponse);
  const secure = securityHeaders();
  const fastPath = createFastPath({ ...keyCheck, catalog, cache });
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    begin(req, res);
    secure(res);
    if (!fastPath(req, res)) app(req, res);
  };
  return Object.assign(listener, { limiter });
}
