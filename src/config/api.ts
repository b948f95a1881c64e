import { resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { common, durationSeconds, httpUrl, int, keysDatabasePath, keysPath, meiliApi, metricsHost, optional, parse, trustProxy, type Env } from './fields.js';
import { cacheBudget, searchConfig, searchRuntime, searchRuntimeConfig, type SearchConfig, type SearchRuntimeConfig } from './search.js';

/* The API's configuration (npm start). */

/** The API's HTTP server limits (src/http/server/server-limits.ts). */
export interface ServerLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
}

export const DEFAULT_SERVER_LIMITS: Readonly<ServerLimits> = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_000,
});

const serverLimits = {
  HTTP_HEADERS_TIMEOUT_MS: optional(int(1_000, 600_000)).default(DEFAULT_SERVER_LIMITS.headersTimeoutMs),
  HTTP_REQUEST_TIMEOUT_MS: optional(int(1_000, 600_000)).default(DEFAULT_SERVER_LIMITS.requestTimeoutMs),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: optional(int(100, 600_000)).default(DEFAULT_SERVER_LIMITS.keepAliveTimeoutMs),
  HTTP_MAX_CONNECTIONS: optional(int(1, 1_000_000)).default(DEFAULT_SERVER_LIMITS.maxConnections),
};

function serverLimitsConfig(v: { HTTP_HEADERS_TIMEOUT_MS: number; HTTP_REQUEST_TIMEOUT_MS: number; HTTP_KEEP_ALIVE_TIMEOUT_MS: number; HTTP_MAX_CONNECTIONS: number }): ServerLimits {
  // Node refuses a headers timeout longer than the request timeout; say so in our own words.
  if (v.HTTP_HEADERS_TIMEOUT_MS > v.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError('Invalid configuration: HTTP_HEADERS_TIMEOUT_MS must not be greater than HTTP_REQUEST_TIMEOUT_MS');
  }
  return Object.freeze({
    headersTimeoutMs: v.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: v.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: v.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: v.HTTP_MAX_CONNECTIONS,
  });
}

// on: repeated cacheable reads are answered without entering Express (src/http/fast/fast-path.ts);
// off: Express answers every request, the same answers (the HTTP suites run both ways).
const fastPath = {
  FAST_PATH: optional(z.enum(['on', 'off'], { error: 'must be on or off' })).default('on'),
};

/** FAST_PATH alone, for what builds an app without the rest of the API's configuration (tests). */
export function fastPathEnabled(env: Env): boolean {
  return parse(z.object(fastPath), env).FAST_PATH === 'on';
}

export const apiSchema = z.object({
  ...common,
  ...keysPath,
  ...meiliApi,
  PORT: optional(int(0, 65_535)).default(3000),
  HOST: optional(z.string().min(1)).default('0.0.0.0'),
  DATABASE_BUSY_TIMEOUT_MS: optional(int(0, 600_000)).default(2_000),
  // One memory budget for every cache of an API process (see cacheBudget); RESPONSE_CACHE_MB
  // is its former name, still read when CACHE_MB is not set.
  CACHE_MB: optional(int(0, 65_536)),
  RESPONSE_CACHE_MB: optional(int(0, 65_536)),
  PUBLIC_BASE_URL: optional(
    // One message for both forms: a union reports its last member's (a bare regex pattern).
    z
      .string()
      // No query or fragment in either form: OpenAPI's servers.url is a base that paths are
      // appended to, so `https://a.com/x?y=1` would give partners `https://a.com/x?y=1/api/v1/...`.
      .refine((v) => (httpUrl.safeParse(v).success && !/[?#]/.test(v)) || /^\/[^\s?#]*$/.test(v), {
        error:
          'must be an http:// or https:// address (https://api.example.com) or a path starting with / (/syndication), without ? or #',
      })
      .transform((v) => (v.startsWith('/') ? v : httpUrl.parse(v))),
  ).default('/'),
  // Off by default (see docs/partners.md, Rate limits): a harness or partner that was not limited
  // yesterday is not refused after an upgrade; operators set it, editors set per-key rates.
  RATE_LIMIT_PER_MINUTE: optional(int(0, 1_000_000_000)).default(0),
  RATE_LIMIT_BURST_SECONDS: optional(int(1, 3_600)).default(10),
  RATE_LIMIT_PROCESSES: optional(int(1, 4_096)),
  ...serverLimits,
  ...metricsHost,
  METRICS_PORT: optional(int(0, 65_535)),
  SNAPSHOT_MAX_AGE: optional(durationSeconds).default(1_800),
  WEB_CONCURRENCY: optional(int(1, 256)).default(1),
  SHUTDOWN_TIMEOUT_MS: optional(int(0, 600_000)).default(10_000),
  SHUTDOWN_DELAY_MS: optional(int(0, 600_000)).default(10_000),
  TRUST_PROXY: optional(trustProxy).default(false),
  ...fastPath,
  ...searchRuntime,
});

/**
 * CACHE_MB's default: 24 MB of answers asked for at least twice (src/lib/doorkeeper.ts) and 8 MB
 * of ranked results, so that the API stays within 300 MB at its peak on 110,000 articles with
 * every cache full (decision 0076; it was 64 before answers were kept on their second request).
 */
export const DEFAULT_CACHE_MB = 32;

export interface ApiConfig {
  port: number;
  host: string;
  databasePath: string;
  keysDatabasePath: string;
  busyTimeoutMs: number;
  logLevel: string;
  /** The response cache's share of CACHE_MB. */
  responseCacheBytes: number;
  /** The address partners use, for the OpenAPI document's `servers`; `/` = wherever it was fetched from. */
  publicBaseUrl: string;
  /** Default per-key rate (0 = no rate limit) and burst; keys may have their own rate. */
  rateLimit: { perMinute: number; burstSeconds: number };
  search: SearchConfig;
  serverLimits: ServerLimits;
  searchRuntime: SearchRuntimeConfig;
  /** Undefined: no metrics endpoint. */
  metrics: { port: number; host: string } | undefined;
  /** /health says `degraded` past this age of the snapshot. */
  snapshotMaxAgeSeconds: number;
  /** API processes on this host (node:cluster when more than one). */
  processes: number;
  /**
   * API processes that share each key's rate, each enforcing its share: every process behind
   * the balancer (RATE_LIMIT_PROCESSES), else this host's (WEB_CONCURRENCY).
   */
  rateLimitProcesses: number;
  /** How long a SIGTERM drain may take before the remaining connections are cut. */
  shutdownTimeoutMs: number;
  /**
   * On SIGTERM, how long /health answers 503 `draining` while the process keeps serving, before
   * it stops accepting: the time a balancer's health check needs to take it out of rotation.
   */
  shutdownDelayMs: number;
  /** Express's `trust proxy` value: which X-Forwarded-For hops give the client address. */
  trustProxy: boolean | number | string;
  /** FAST_PATH: false sends every request through Express. */
  fastPath: boolean;
}

/** What the app (src/app.ts) reads from the configuration. */
export type AppSettings = Pick<ApiConfig, 'responseCacheBytes' | 'publicBaseUrl' | 'rateLimit' | 'processes' | 'snapshotMaxAgeSeconds' | 'trustProxy'>;

/**
 * The app's settings when no variable is set. Tests and tools build an app from these, so the
 * defaults have one owner: the schema above.
 */
export function defaultAppSettings(): AppSettings {
  const { responseCacheBytes, publicBaseUrl, rateLimit, processes, snapshotMaxAgeSeconds, trustProxy } = loadApiConfig({});
  return { responseCacheBytes, publicBaseUrl, rateLimit, processes, snapshotMaxAgeSeconds, trustProxy };
}

export function loadApiConfig(env: Env): Readonly<ApiConfig> {
  const v = parse(apiSchema, env);
  const search = searchConfig(v, v.MEILI_SEARCH_KEY, v.MEILI_TIMEOUT_MS);
  const budget = cacheBudget((v.CACHE_MB ?? v.RESPONSE_CACHE_MB ?? DEFAULT_CACHE_MB) * 1024 * 1024);
  return Object.freeze({
    port: v.PORT,
    host: v.HOST,
    databasePath: resolve(v.DATABASE_PATH),
    keysDatabasePath: keysDatabasePath(v),
    busyTimeoutMs: v.DATABASE_BUSY_TIMEOUT_MS,
    logLevel: v.LOG_LEVEL,
    responseCacheBytes: budget.response,
    publicBaseUrl: v.PUBLIC_BASE_URL,
    rateLimit: { perMinute: v.RATE_LIMIT_PER_MINUTE, burstSeconds: v.RATE_LIMIT_BURST_SECONDS },
    search,
    searchRuntime: searchRuntimeConfig(v, search.engine, budget.search, v.WEB_CONCURRENCY),
    serverLimits: serverLimitsConfig(v),
    metrics: v.METRICS_PORT === undefined ? undefined : { port: v.METRICS_PORT, host: v.METRICS_HOST },
    snapshotMaxAgeSeconds: v.SNAPSHOT_MAX_AGE,
    processes: v.WEB_CONCURRENCY,
    rateLimitProcesses: v.RATE_LIMIT_PROCESSES ?? v.WEB_CONCURRENCY,
    shutdownTimeoutMs: v.SHUTDOWN_TIMEOUT_MS,
    shutdownDelayMs: v.SHUTDOWN_DELAY_MS,
    trustProxy: v.TRUST_PROXY,
    fastPath: v.FAST_PATH === 'on',
  });
}
