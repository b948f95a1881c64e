import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, type Registry } from 'prom-client';
import { METRIC_PREFIX as P } from './registry.js';
import { RequestStats } from './request-stats.js';

export type WaitEnd = 'change' | 'timeout' | 'room' | 'stop' | 'gone';

/** What the change feed's waiting requests (src/http/routes/feed-wait.ts) report to the metrics. */
export interface WaitObserver {
  started(): void;
  ended(reason: WaitEnd): void;
}

const WAIT_ENDS: readonly WaitEnd[] = ['change', 'timeout', 'room', 'stop', 'gone'];

/*
 * The API's metrics. Requests are counted once per response, on `finish`, in plain numbers
 * (src/observability/request-stats.ts): the cached fast path pays a listener, a Map lookup and
 * a few additions. Everything else (cache, search pool, snapshot, sync
 * runs) is read when Prometheus scrapes, through callbacks, so its owners expose plain numbers.
 */

const KEY_REFUSALS = new Set(['missing_api_key', 'invalid_api_key', 'revoked_api_key', 'expired_api_key']);
/** 503s that protect the service (src/errors.ts): a partner over its rate, search at capacity. */
const LOAD_REFUSALS = new Set(['search_busy', 'rate_limited']);
/** The 5xx codes of the service's own failures; any other 5xx is counted as `other`. */
const SERVER_ERRORS = new Set(['internal_error', 'service_unavailable']);

/** The response cache's own counts (the search engineer's `stats()`), when it has them. */
export interface CacheStats {
  hits: number;
  misses: number;
  bytes: number;
  entries: number;
}

/**
 * The search engine's flat counts (`stats()`): admission's `in_flight`, `queued`, `admitted`
 * and `refused_<reason>` (src/search/admission.ts), then the engine's own (`threads_replaced`,
 * `ranked_cache_bytes`, ...). Any may be missing: an engine reports what it has.
 */
export type SearchStats = Partial<Record<string, number>>;

export interface SyncHealth {
  lastSuccessAt: number | undefined;
  lastAttemptFailed: boolean;
}

/** Read at each scrape; any may return undefined when it has nothing to say. */
export interface ApiMetricSources {
  snapshotAgeSeconds(): number | undefined;
  sync(): SyncHealth | undefined;
  cache(): CacheStats | undefined;
  search(): SearchStats | undefined;
  /** The search engine's own health check (Meilisearch is asked over HTTP). */
  searchUp(): Promise<boolean>;
}

/** What the request log knows of a finished request (src/http/pipeline/context.ts), as metrics need it. */
export interface FinishedRequest {
  readonly startedAt: number;
  /**
   * The request's route (src/http/endpoints/routes-table.ts), matched once: its name is the `route`
   * label, a small fixed set, never the raw path (slugs would explode the series).
   */
  readonly route: { readonly name: string } | undefined;
  readonly errorCode: string | undefined;
  readonly fastPath: boolean;
}

export class ApiMetrics {
  private readonly requests: RequestStats;
  private readonly keyRefusals: Counter;
  private readonly refusals: Counter;
  private readonly serverErrors: Counter;
  private fastPathCount = 0;
  private sources: Partial<ApiMetricSources> = {};
  /** The change feed's waiting requests (src/http/routes/feed-wait.ts). */
  readonly waits: WaitObserver;

  constructor(readonly registry: Registry) {
    this.requests = new RequestStats(registry);
    // Refusals are rare (401, 503): prom-client's own counters are cheap enough there.
    this.keyRefusals = new Counter({
      name: `${P}key_refusals_total`,
      help: 'Requests refused with 401, by error code (missing, invalid, revoked, expired key).',
      labelNames: ['reason'],
      registers: [registry],
    });
    this.refusals = new Counter({
      name: `${P}load_refusals_total`,
      help: 'Requests refused to protect the service: search_busy or rate_limited.',
      labelNames: ['reason'],
      registers: [registry],
    });
    // The 5xx that are our own failures, apart from the refusals above: an alert on these is
    // never set off by one partner polling over its rate (503 rate_limited).
    this.serverErrors = new Counter({
      name: `${P}server_errors_total`,
      help: 'Responses with a 5xx status that are failures of the service, by error code (internal_error, service_unavailable); load refusals are not counted.',
      labelNames: ['code'],
      registers: [registry],
    });
    // Every known series from the start, at 0: a rate over a series that appears only with its
    // first increment misses that increment, and an absent one makes a ratio empty.
    for (const reason of LOAD_REFUSALS) this.refusals.inc({ reason }, 0);
    for (const code of SERVER_ERRORS) this.serverErrors.inc({ code }, 0);
    const fastPathCount = () => this.fastPathCount;
    new Counter({
      name: `${P}fast_path_responses_total`,
      help: 'Cached responses sent by the fast path, without entering Express.',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(fastPathCount());
      },
    });
    // Waiting requests start and end rarely (seconds apart per partner): prom-client's own.
    const waiting = new Gauge({
      name: `${P}feed_waiting_requests`,
      help: 'Change feed requests waiting now (wait=N) for the next change.',
      registers: [registry],
    });
    const waitsEnded = new Counter({
      name: `${P}feed_waits_ended_total`,
      help: 'Change feed waits ended, by reason: change (the feed moved), timeout (none came), room (the connection was needed for a new client), stop (the API stopped), gone (the client left).',
      labelNames: ['reason'],
      registers: [registry],
    });
    for (const reason of WAIT_ENDS) waitsEnded.inc({ reason }, 0);
    this.waits = {
      started: () => waiting.inc(),
      ended: (reason) => {
        waiting.dec();
        waitsEnded.inc({ reason });
      },
    };
    this.scraped(registry);
  }

  /**
   * Called once per response by the request log's hook (fast path and Express alike). An
   * arrow property, so it can be handed over as the hook itself.
   */
  readonly responded = (_req: IncomingMessage, res: ServerResponse, request: FinishedRequest): void => {
    if (request.fastPath) this.fastPathCount += 1;
    const status = res.statusCode;
    this.requests.record(request.route?.name ?? 'other', status, (Date.now() - request.startedAt) / 1000);
    if (status === 401) {
      const code = request.errorCode;
      if (typeof code === 'string') this.keyRefusals.inc({ reason: KEY_REFUSALS.has(code) ? code : 'other' });
    } else if (status >= 500) {
      const code = request.errorCode;
      if (code !== undefined && LOAD_REFUSALS.has(code)) this.refusals.inc({ reason: code });
      else this.serverErrors.inc({ code: code !== undefined && SERVER_ERRORS.has(code) ? code : 'other' });
    }
  };

  /** Where scrape-time values come from; may be called again as parts land. */
  observe(sources: Partial<ApiMetricSources>): void {
    this.sources = { ...this.sources, ...sources };
  }

  private scraped(registry: Registry): void {
    const sources = () => this.sources;
    const gauge = (name: string, help: string, read: () => number | undefined, aggregator: 'max' | 'sum' = 'max') =>
      new Gauge({
        name: `${P}${name}`,
        help,
        registers: [registry],
        aggregator,
        collect() {
          const value = read();
          if (value === undefined) this.reset();
          else this.set(value);
        },
      });
    gauge('snapshot_age_seconds', 'Age of the oldest locale of the snapshot (time since its last sync).', () =>
      sources().snapshotAgeSeconds?.(),
    );
    gauge('last_sync_success_timestamp_seconds', 'When the last successful sync from the CMS ended (read from sync_runs).', () => {
      const at = sources().sync?.()?.lastSuccessAt;
      return at === undefined ? undefined : at / 1000;
    });
    gauge('last_sync_failed', '1 when the last finished sync run failed (read from sync_runs).', () => {
      const sync = sources().sync?.();
      return sync === undefined ? undefined : Number(sync.lastAttemptFailed);
    });
    new Gauge({
      name: `${P}search_engine_up`,
      help: '1 when the search engine answers its health check, 0 when search answers 503.',
      registers: [registry],
      aggregator: 'min',
      async collect() {
        const up = sources().searchUp;
        if (up) this.set(Number(await up()));
      },
    });
    // Counts kept by their owners, exposed as counters (reset and re-set at each scrape).
    const counter = (name: string, help: string, read: () => number | undefined) =>
      new Counter({
        name: `${P}${name}`,
        help,
        registers: [registry],
        collect() {
          this.reset();
          const value = read();
          if (value !== undefined) this.inc(value);
        },
      });
    counter('response_cache_hits_total', 'Response cache hits since start (when the cache counts them).', () => sources().cache?.()?.hits);
    counter('response_cache_misses_total', 'Response cache misses since start.', () => sources().cache?.()?.misses);
    gauge('response_cache_bytes', 'Bytes held by the response cache.', () => sources().cache?.()?.bytes, 'sum');
    gauge('response_cache_entries', 'Entries in the response cache.', () => sources().cache?.()?.entries, 'sum');
    const search = (name: string) => () => sources().search?.()?.[name];
    gauge('search_in_flight', 'Searches running now.', search('in_flight'), 'sum');
    gauge('search_queued', 'Searches waiting for a slot.', search('queued'), 'sum');
    counter('search_admitted_total', 'Searches given a slot since start.', search('admitted'));
    new Counter({
      name: `${P}search_pool_refused_total`,
      help: 'Searches refused with search_busy since start, by reason: wait, queue_full, shed, timeout.',
      labelNames: ['reason'],
      registers: [registry],
      aggregator: 'sum',
      collect() {
        this.reset();
        const stats = sources().search?.() ?? {};
        for (const [name, n] of Object.entries(stats)) {
          if (name.startsWith('refused_') && n !== undefined) this.inc({ reason: name.slice('refused_'.length) }, n);
        }
      },
    });
    counter('search_threads_replaced_total', 'Search threads replaced since start: a search stopped at its time budget, or a thread that died.', search('threads_replaced'));
    gauge('search_ranked_cache_bytes', "Bytes held by the search threads' ranked results.", search('ranked_cache_bytes'), 'sum');
  }
}

/** Duck-typed `stats()` of a part that may or may not have one yet. */
export function statsOf<T>(part: unknown): (() => T | undefined) | undefined {
  const stats = (part as { stats?: unknown } | undefined)?.stats;
  return typeof stats === 'function' ? () => stats.call(part) as T : undefined;
}

