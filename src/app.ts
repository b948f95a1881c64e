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
import { clientAddressResolver, compileTrust, type TrustProxy } from './http/client-address.js';
import { metricSources } from './http/metric-sources.js';
import { KeyVerifier } from './keys/verifier.js';
import type { ApiMetrics } from './observability/api-metrics.js';
import type { Logger } from './logger.js';
import type { SearchEngine } from './search/engine.js';
import { systemClock, type Clock } from './time.js';

export interface AppDeps {
  store: SnapshotStore;
  engine: SearchEngine;
  logger: Logger;
  clock?: Clock;
  responseCacheBytes?: number;
  /** Request counts and scrape-time sources go here when metrics are on. */
  metrics?: ApiMetrics;
  /** Past this age of the snapshot /health says `degraded` (SNAPSHOT_MAX_AGE); 30 min by default. */
  snapshotMaxAgeSeconds?: number;
  /** API processes on this host (WEB_CONCURRENCY): the rate limiter's per-process share. */
  processes?: number;
  /** Express's `trust proxy` value (TRUST_PROXY); the request log uses the same rules. */
  trustProxy?: TrustProxy;
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
  const cache = new ResponseCache(deps.responseCacheBytes ?? 64 * 1024 * 1024);

  const app = express();
  app.disable('x-powered-by');
  // Validators are computed once per cached body (src/http/representation.ts), not by Express.
  app.set('etag', false);
  app.set('trust proxy', compileTrust(deps.trustProxy ?? false));
  app.use(onlyReads);
  const snapshotMaxAgeSeconds = deps.snapshotMaxAgeSeconds ?? 1_800;
  app.use(metaRoutes({ store: deps.store, engine: deps.engine, clock, snapshotMaxAgeSeconds }));
  // Everything under /api/v1 but the OpenAPI document (served above) needs a partner key,
  // checked before anything else about the request, the path included.
  app.use('/api/v1', requireApiKey(deps.store, keys));
  app.use(contentRoutes({ store: deps.store, catalog, engine: deps.engine, cache, clock }));
  app.use(unknownPath);
  app.use(errorHandler(deps.store, deps.logger));

  const log = requestLog(deps.logger, clientAddressResolver(deps.trustProxy ?? false));
  const secure = helmet();
  const fastPath = createFastPath({ store: deps.store, keys, catalog, cache, clock });
  const metrics = deps.metrics;
  metrics?.observe(metricSources(deps.store, clock, snapshotMaxAgeSeconds, { cache, engine: deps.engine }));
  return (req: IncomingMessage, res: ServerResponse) => {
    metrics?.track(res);
    log(req, res, () => {
      secure(req, res, () => {
        if (fastPath(req, res)) metrics?.servedByFastPath();
        else app(req, res);
      });
    });
  };
}
