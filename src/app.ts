import express from 'express';
import helmet from 'helmet';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { Catalog } from './content/catalog.js';
import type { SnapshotStore } from './db/snapshot-store.js';
import { requireApiKey } from './http/api-key.js';
import { errorHandler, onlyReads, unknownPath } from './http/error-handler.js';
import { createFastPath } from './http/fast-path.js';
import { ResponseCache } from './http/representation.js';
import { requestLog } from './http/request-log.js';
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
  /** The response cache, when the caller wants its stats(); else one is made of responseCacheBytes. */
  responseCache?: ResponseCache;
}

/**
 * Builds the API as a request listener; never listens (src/server.ts does, tests pass it to
 * their own server). Every request is logged and gets the security headers first, then is
 * answered from the response cache when it can be (src/http/fast-path.ts), else by Express.
 */
export function createApp(deps: AppDeps): RequestListener {
  const clock = deps.clock ?? systemClock;
  const keys = new KeyVerifier();
  const catalog = new Catalog();
  const cache = deps.responseCache ?? new ResponseCache(deps.responseCacheBytes ?? 64 * 1024 * 1024);

  const app = express();
  app.disable('x-powered-by');
  // Validators are computed once per cached body (src/http/representation.ts), not by Express.
  app.set('etag', false);
  app.use(onlyReads);
  app.use(metaRoutes({ store: deps.store, engine: deps.engine, clock }));
  // Everything under /api/v1 but the OpenAPI document (served above) needs a partner key,
  // checked before anything else about the request, the path included.
  app.use('/api/v1', requireApiKey(deps.store, keys));
  app.use(contentRoutes({ store: deps.store, catalog, engine: deps.engine, cache, clock }));
  app.use(unknownPath);
  app.use(errorHandler(deps.store, deps.logger));

  const log = requestLog(deps.logger);
  const secure = helmet();
  const fastPath = createFastPath({ store: deps.store, keys, catalog, cache, clock });
  return (req: IncomingMessage, res: ServerResponse) => {
    log(req, res, () => {
      secure(req, res, () => {
        if (!fastPath(req, res)) app(req, res);
      });
    });
  };
}
