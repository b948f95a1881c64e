import express from 'express';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { Catalog } from './content/catalog.js';
import type { KeysStore } from './db/keys/keys-store.js';
import type { SnapshotStore } from './db/snapshot/snapshot-store.js';
import { requireApiKey, type KeyCheckDeps } from './http/pipeline/api-key.js';
import { errorHandler, onlyReads, unknownPath } from './http/pipeline/error-handler.js';
import { basePathOf, stripBasePath } from './http/pipeline/base-path.js';
import { createFastPath } from './http/fast/fast-path.js';
import { RateLimiter, type RateLimitSettings } from './http/pipeline/rate-limit.js';
import { ResponseCache } from './http/cache/representation.js';
import { leadingHeaders, setHeaders } from './http/pipeline/response-head.js';
import { securityHeaderList } from './http/server/security-headers.js';
import { requestLog, type ResponseHook } from './http/pipeline/request-log.js';
import { revalidationDiscount } from './http/pipeline/revalidation-discount.js';
import { usageHook } from './http/pipeline/usage-hook.js';
import { contentRoutes } from './http/routes/content.js';
import { rehearseSearchResponses, RESPONSE_REHEARSAL_ROUNDS } from './http/warm.js';
import { FeedWaits } from './http/routes/feed-wait.js';
import { docsRoutes } from './http/routes/docs.js';
import { metaRoutes } from './http/routes/meta.js';
import { StopNotice } from './http/server/stop-notice.js';
import { clientAddressResolver, compileTrust, type TrustProxy } from './http/server/client-address.js';
import { metricSources } from './http/routes/metric-sources.js';
import { KeyVerifier } from './keys/verifier.js';
import type { ApiMetrics } from './observability/api-metrics.js';
import type { Logger } from './logger.js';
import type { SearchEngine } from './search/engine.js';
import { LOCALES } from './locale.js';
import { systemClock, type Clock } from './lib/time.js';

export interface AppDeps {
  store: SnapshotStore;
  /** The keys database (KEYS_DATABASE_PATH): the API reads keys there, never in the snapshot. */
  keysStore: KeysStore;
  engine: SearchEngine;
  logger: Logger;
  clock?: Clock;
  /*
   * The settings below come from the configuration (src/config/api.ts), which alone owns
   * their defaults: tests and tools start from defaultAppSettings().
   */
  /** The response cache's share of CACHE_MB. */
  responseCacheBytes: number;
  /** PUBLIC_BASE_URL: the OpenAPI document's server address. */
  publicBaseUrl: string;
  /** The response cache, when the caller wants its stats(); else one is made of responseCacheBytes. */
  responseCache?: ResponseCache;
  /** The default per-key request rate (RATE_LIMIT_PER_MINUTE, RATE_LIMIT_BURST_SECONDS). */
  rateLimit: Omit<RateLimitSettings, 'processes'>;
  /**
   * API processes sharing each key's rate (RATE_LIMIT_PROCESSES, else WEB_CONCURRENCY): each
   * enforces its share of every rate.
   */
  processes: number;
  /** Called once per response, after its log line. */
  onResponse?: ResponseHook;
  /** Request counts and scrape-time sources go here when metrics are on. */
  metrics?: ApiMetrics;
  /** Past this age of the snapshot /health says `degraded` (SNAPSHOT_MAX_AGE). */
  snapshotMaxAgeSeconds: number;
  /** Express's `trust proxy` value (TRUST_PROXY); the request log uses the same rules. */
  trustProxy: TrustProxy;
  /** What /health says when the process is stopping; the process (src/api-process.ts) announces it. */
  stopNotice?: StopNotice;
  /** FAST_PATH: false sends every request through Express (src/http/fast/fast-path.ts); on by default. */
  fastPath?: boolean;
}

/** The listener, and the parts other modules report on (metrics). */
export type App = RequestListener & {
  limiter: RateLimiter;
  /** Announced on SIGTERM: /health then answers 503 `draining` (src/http/server/stop-notice.ts). */
  stopNotice: StopNotice;
  /**
   * Builds the views of every locale now (about 0.4 s for 100,000 articles), rehearses a
   * search response of each (rehearseSearchResponses) and reads the keys (KeyVerifier.warm),
   * so that it is not the first partners' requests after a start that wait for them. Quiet
   * when the snapshot or the keys database is missing or a locale not synced yet: the store
   * logs the first, a request answers each. `rounds`: how many times each response is built
   * (RESPONSE_REHEARSAL_ROUNDS when absent; src/api-process.ts asks one more after the start's
   * full collection).
   */
  warm(rounds?: number): void;
  /** Registers on the server carrying the app what the fast path needs of it (src/http/server/server-limits.ts calls it). */
  attach(server: Server): void;
  /** Answers the change feed's waiting requests now, and any later `wait` at once (on SIGTERM). */
  stopWaiting(): void;
  /** The change feed's waiting requests (src/http/routes/feed-wait.ts). */
  waits: FeedWaits;
};

/**
 * Builds the API as a request listener; never listens (src/server.ts does, tests pass it to
 * their own server). Every request gets its context and log line first, then is answered from
 * the response cache when it can be (src/http/fast/fast-path.ts), else by Express; both send the
 * request id and the security headers first (src/http/pipeline/response-head.ts).
 */
export function createApp(deps: AppDeps): App {
  const clock = deps.clock ?? systemClock;
  const catalog = new Catalog((locale, version, ms) =>
    deps.logger.debug({ locale, version, ms }, `built the view of ${locale} (content version ${version}) in ${ms} ms`),
  );
  const cache = deps.responseCache ?? new ResponseCache(deps.responseCacheBytes);
  const limiter = new RateLimiter({ ...deps.rateLimit, processes: deps.processes });
  const keyCheck: KeyCheckDeps = { store: deps.store, keysStore: deps.keysStore, keys: new KeyVerifier(clock), limiter, clock };

  const app = express();
  app.disable('x-powered-by');
  // Validators are computed once per cached body (src/http/cache/representation.ts), not by Express.
  app.set('etag', false);
  app.set('trust proxy', compileTrust(deps.trustProxy));
  app.use(onlyReads);
  const { snapshotMaxAgeSeconds, publicBaseUrl } = deps;
  const stopNotice = deps.stopNotice ?? new StopNotice();
  app.use(metaRoutes({ store: deps.store, keysStore: deps.keysStore, engine: deps.engine, clock, snapshotMaxAgeSeconds, publicBaseUrl, stopNotice }));
  app.use(docsRoutes(clock));
  // Everything under /api/v1 but the OpenAPI document (served above) needs a partner key,
  // checked before anything else about the request, the path included.
  app.use('/api/v1', requireApiKey(keyCheck));
  const waits = new FeedWaits({
    tagOf: (locale) => catalog.view(deps.store.session(), locale).contentTag(clock()),
    maxPerKey: FeedWaits.maxPerKey(deps.processes),
    observer: deps.metrics?.waits,
  });
  app.use(contentRoutes({ store: deps.store, catalog, engine: deps.engine, cache, clock, waits }));
  app.use(unknownPath);
  app.use(errorHandler(deps.logger, (error) => deps.store.noticeDamage(error)));

  const metrics = deps.metrics;
  metrics?.observe(metricSources(deps.store, clock, snapshotMaxAgeSeconds, { cache, engine: deps.engine }));
  // Usage per key and day (src/http/pipeline/usage-hook.ts): counted here, written in the background.
  const onResponse = composeHooks(
    revalidationDiscount(limiter, clock),
    metrics ? metrics.responded : undefined,
    usageHook(deps.keysStore.counts),
    deps.onResponse,
  );
  const begin = requestLog(deps.logger, { onResponse, clientAddress: clientAddressResolver(deps.trustProxy) });
  const security = securityHeaderList();
  const fastPath = deps.fastPath === false ? undefined : createFastPath({ ...keyCheck, catalog, cache, security });
  const basePath = basePathOf(deps.publicBaseUrl);
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    // Behind a proxy that keeps PUBLIC_BASE_URL's path, requests are routed without it
    // (src/http/pipeline/base-path.ts); the request log and metrics see the path as routed.
    if (basePath !== '' && req.url !== undefined) req.url = stripBasePath(req.url, basePath);
    const context = begin(req, res);
    context.basePath = basePath;
    if (fastPath?.(req, res, context)) return;
    setHeaders(res, leadingHeaders(context, security));
    app(req, res);
  };
  const warm = (rounds?: number) => {
    for (const locale of LOCALES) {
      try {
        catalog.view(deps.store.session(), locale);
      } catch {
        // See App.warm: a request will say what is wrong.
      }
    }
    const started = performance.now();
    const hits = rehearseSearchResponses(deps.store, catalog, clock(), rounds);
    if (hits > 0) deps.logger.debug({ hits, rounds: rounds ?? RESPONSE_REHEARSAL_ROUNDS, ms: Math.round(performance.now() - started) }, 'rehearsed search responses');
    try {
      keyCheck.keys.warm(deps.keysStore.session());
    } catch {
      // No keys database yet, or a failing one: a request will say so.
    }
  };
  const attach = (server: Server) => fastPath?.attach(server);
  return Object.assign(listener, { limiter, stopNotice, warm, attach, waits, stopWaiting: () => waits.stop() });
}

function composeHooks(...hooks: (ResponseHook | undefined)[]): ResponseHook | undefined {
  const present = hooks.filter((h): h is ResponseHook => h !== undefined);
  if (present.length <= 1) return present[0];
  return (req, res, context) => {
    for (const hook of present) hook(req, res, context);
  };
}
