import express from 'express';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { Catalog } from './content/catalog.js';
import type { KeysStore } from './db/keys-store.js';
import type { SnapshotStore } from './db/snapshot-store.js';
import { requireApiKey, type KeyCheckDeps } from './http/api-key.js';
import { errorHandler, onlyReads, unknownPath } from './http/error-handler.js';
import { createFastPath } from './http/fast-path.js';
import { RateLimiter, type RateLimitSettings } from './http/rate-limit.js';
import { ResponseCache } from './http/representation.js';
import { leadingHeaders, setHeaders } from './http/response-head.js';
import { securityHeaderList } from './http/security-headers.js';
import { requestLog, type ResponseHook } from './http/request-log.js';
import { TurnEnds } from './http/turn-ends.js';
import { contentRoutes } from './http/routes/content.js';
import { docsRoutes } from './http/routes/docs.js';
import { metaRoutes } from './http/routes/meta.js';
import { clientAddressResolver, compileTrust, type TrustProxy } from './http/client-address.js';
import { metricSources } from './http/metric-sources.js';
import { KeyVerifier } from './keys/verifier.js';
import type { ApiMetrics } from './observability/api-metrics.js';
import type { Logger } from './logger.js';
import type { SearchEngine } from './search/engine.js';
import { LOCALES } from './locale.js';
import { systemClock, type Clock } from './time.js';

export interface AppDeps {
  store: SnapshotStore;
  /** The keys database (KEYS_DATABASE_PATH): the API reads keys there, never in the snapshot. */
  keysStore: KeysStore;
  engine: SearchEngine;
  logger: Logger;
  clock?: Clock;
  responseCacheBytes?: number;
  /** PUBLIC_BASE_URL: the OpenAPI document's server address; `/` when unset. */
  publicBaseUrl?: string;
  /** The response cache, when the caller wants its stats(); else one is made of responseCacheBytes. */
  responseCache?: ResponseCache;
  /** Per-key request rates (default: off, as in tests that do not test them). */
  rateLimit?: Omit<RateLimitSettings, 'processes'>;
  /** API processes on this host (WEB_CONCURRENCY): each enforces its share of every rate. */
  processes?: number;
  /** Called once per response, after its log line. */
  onResponse?: ResponseHook;
  /** Request counts and scrape-time sources go here when metrics are on. */
  metrics?: ApiMetrics;
  /** Past this age of the snapshot /health says `degraded` (SNAPSHOT_MAX_AGE); 30 min by default. */
  snapshotMaxAgeSeconds?: number;
  /** Express's `trust proxy` value (TRUST_PROXY); the request log uses the same rules. */
  trustProxy?: TrustProxy;
}

/** The listener, and the parts other modules report on (metrics). */
export type App = RequestListener & {
  limiter: RateLimiter;
  /**
   * Builds the views of every locale now (about 0.4 s for 100,000 articles), so that it is not
   * the first partners' requests after a start that wait for them. Quiet when the snapshot is
   * missing or a locale not synced yet: the store logs the first, a request answers either.
   */
  warm(): void;
  /** Ends now the fast path's answers held until the end of the turn (src/http/turn-ends.ts). */
  flush(): void;
};

/**
 * Builds the API as a request listener; never listens (src/server.ts does, tests pass it to
 * their own server). Every request gets its context and log line first, then is answered from
 * the response cache when it can be (src/http/fast-path.ts), else by Express; both send the
 * request id and the security headers first (src/http/response-head.ts).
 */
export function createApp(deps: AppDeps): App {
  const clock = deps.clock ?? systemClock;
  // The fast path's answers of a turn leave together at its end (src/http/turn-ends.ts); work
  // that may take long ends them first: Express's (a query, a search), a view's rebuild after
  // a sync (about 0.4 s per 100,000 articles), and Node answering a socket itself (the server
  // calls the app's flush, src/http/server-limits.ts).
  const ends = new TurnEnds();
  const catalog = new Catalog(
    (locale, version, ms) => deps.logger.debug({ locale, version, ms }, `built the view of ${locale} (content version ${version}) in ${ms} ms`),
    ends.flush,
  );
  const cache = deps.responseCache ?? new ResponseCache(deps.responseCacheBytes ?? 64 * 1024 * 1024);
  const limiter = new RateLimiter({ perMinute: 0, burstSeconds: 1, ...deps.rateLimit, processes: deps.processes ?? 1 });
  const keyCheck: KeyCheckDeps = { store: deps.store, keysStore: deps.keysStore, keys: new KeyVerifier(clock), limiter, clock };

  const app = express();
  app.disable('x-powered-by');
  // Validators are computed once per cached body (src/http/representation.ts), not by Express.
  app.set('etag', false);
  app.set('trust proxy', compileTrust(deps.trustProxy ?? false));
  app.use(onlyReads);
  const snapshotMaxAgeSeconds = deps.snapshotMaxAgeSeconds ?? 1_800;
  app.use(metaRoutes({ store: deps.store, keysStore: deps.keysStore, engine: deps.engine, clock, snapshotMaxAgeSeconds, publicBaseUrl: deps.publicBaseUrl ?? '/' }));
  app.use(docsRoutes(clock));
  // Everything under /api/v1 but the OpenAPI document (served above) needs a partner key,
  // checked before anything else about the request, the path included.
  app.use('/api/v1', requireApiKey(keyCheck));
  app.use(contentRoutes({ store: deps.store, catalog, engine: deps.engine, cache, clock }));
  app.use(unknownPath);
  app.use(errorHandler(deps.logger, (error) => deps.store.noticeDamage(error)));

  const metrics = deps.metrics;
  metrics?.observe(metricSources(deps.store, clock, snapshotMaxAgeSeconds, { cache, engine: deps.engine }));
  const onResponse = composeHooks(metrics ? metrics.responded : undefined, deps.onResponse);
  const begin = requestLog(deps.logger, { onResponse, clientAddress: clientAddressResolver(deps.trustProxy ?? false) });
  const security = securityHeaderList();
  const fastPath = createFastPath({ ...keyCheck, catalog, cache, security, ends });
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const context = begin(req, res);
    if (fastPath(req, res)) context.fastPath = true;
    else {
      ends.flush();
      setHeaders(res, leadingHeaders(context, security));
      app(req, res);
    }
  };
  const warm = () => {
    for (const locale of LOCALES) {
      try {
        catalog.view(deps.store.session(), locale);
      } catch {
        // See App.warm: a request will say what is wrong.
      }
    }
  };
  return Object.assign(listener, { limiter, warm, flush: ends.flush });
}

function composeHooks(...hooks: (ResponseHook | undefined)[]): ResponseHook | undefined {
  const present = hooks.filter((h): h is ResponseHook => h !== undefined);
  if (present.length <= 1) return present[0];
  return (req, res, context) => {
    for (const hook of present) hook(req, res, context);
  };
}
