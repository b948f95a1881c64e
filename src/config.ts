import cron from 'node-cron';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import proxyaddr from 'proxy-addr';
import { z } from 'zod';
import { ConfigError } from './errors.js';

/*
 * The only reader of process.env. Each entry point calls one load function once and passes
 * the frozen result down. A bad value stops the process with a message naming the variable.
 */

type Env = Record<string, string | undefined>;

// An empty variable (`PORT=`) counts as unset, as shells and .env files often leave them.
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

const int = (min: number, max: number) =>
  z
    .string()
    .regex(/^[0-9]+$/, { error: `must be a whole number from ${min} to ${max}` })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, { error: `must be a whole number from ${min} to ${max}` })
        .max(max, { error: `must be a whole number from ${min} to ${max}` }),
    );

const httpUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// address' })
  .transform((u) => u.replace(/\/+$/, ''));

const cronExpression = z.string().refine((v) => cron.validate(v), {
  error: 'must be a cron expression, e.g. "*/5 * * * *"',
});

// A duration: whole seconds, or a number with s, m, h or d (`90`, `45m`, `2h`, `1d`).
const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400 };
const durationSeconds = z
  .string()
  .regex(/^[0-9]{1,9}[smhd]?$/, { error: 'must be a duration such as 900, 45m, 2h or 1d' })
  .transform((v) => {
    const unit = /[smhd]$/.test(v) ? v.slice(-1) : 's';
    return Number.parseInt(v, 10) * (DURATION_UNITS[unit] ?? 1);
  })
  .pipe(z.number().min(1, { error: 'must be at least one second' }));

// Express's `trust proxy` setting, in the forms an operator can write in an environment variable.
const trustProxy = z
  .string()
  .refine(
    (v) => {
      if (/^(true|false|[0-9]+)$/.test(v)) return true;
      try {
        proxyaddr.compile(v.split(',').map((s) => s.trim()));
        return true;
      } catch {
        return false;
      }
    },
    { error: 'must be true, false, a number of hops, or addresses, subnets, loopback, linklocal or uniquelocal separated by commas' },
  )
  .transform((v): boolean | number | string => {
    if (v === 'true') return true;
    if (v === 'false') return false;
    if (/^[0-9]+$/.test(v)) return Number(v);
    return v;
  });

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const common = {
  DATABASE_PATH: optional(z.string()).default('data/syndication.db'),
  LOG_LEVEL: optional(z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` })).default('info'),
};

// The keys database lives beside the snapshot unless told otherwise (see the README).
const keysPath = {
  KEYS_DATABASE_PATH: optional(z.string()),
};

function keysDatabasePath(v: { DATABASE_PATH: string; KEYS_DATABASE_PATH?: string }): string {
  return resolve(v.KEYS_DATABASE_PATH ?? join(dirname(resolve(v.DATABASE_PATH)), 'keys.db'));
}

const meili = {
  SEARCH_ENGINE: optional(z.enum(['sqlite', 'meilisearch'], { error: 'must be "sqlite" or "meilisearch"' })),
  MEILI_HOST: optional(httpUrl),
  MEILI_API_KEY: optional(z.string()),
  MEILI_INDEX_PREFIX: optional(
    z.string().regex(/^[A-Za-z0-9_-]{1,200}$/, { error: 'must be letters, digits, - or _' }),
  ).default('articles'),
  MEILI_TIMEOUT_MS: optional(int(100, 600_000)).default(2_000),
};

// Metrics are served on their own port, off unless one is set, on loopback unless told.
const metricsHost = {
  METRICS_HOST: optional(z.string().min(1)).default('127.0.0.1'),
};

// The API only searches: a search-only key is enough (and safer) there; the worker manages
// indexes, documents, settings and tasks. MEILI_API_KEY is the fallback for both.
const meiliApi = { ...meili, MEILI_SEARCH_KEY: optional(z.string()) };
const meiliWorker = {
  ...meili,
  MEILI_ADMIN_KEY: optional(z.string()),
  MEILI_WORKER_TIMEOUT_MS: optional(int(1_000, 3_600_000)).default(30_000),
};

// Secrets are never echoed back in an error message.
const SECRETS = new Set(['CMS_TOKEN', 'MEILI_API_KEY', 'MEILI_SEARCH_KEY', 'MEILI_ADMIN_KEY', 'WEBHOOK_SECRET']);

function parse<S extends z.ZodObject>(schema: S, env: Env): z.output<S> {
  const input: Record<string, string | undefined> = {};
  for (const key of Object.keys(schema.shape)) input[key] = env[key];
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? 'configuration');
    const value = input[name];
    const shown = value === undefined || SECRETS.has(name) ? '' : ` (got ${JSON.stringify(value)})`;
    return `${name} ${issue.message}${shown}`;
  });
  throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
}

export interface SearchConfig {
  engine: 'sqlite' | 'meilisearch';
  /**
   * `apiKey` is the key of the process reading the config: MEILI_SEARCH_KEY for the API,
   * MEILI_ADMIN_KEY for the worker, MEILI_API_KEY when those are unset. `timeoutMs` is per
   * request: MEILI_TIMEOUT_MS for the API, MEILI_WORKER_TIMEOUT_MS for the worker.
   */
  meilisearch?: { host: string; apiKey: string | undefined; indexPrefix: string; timeoutMs: number };
}

interface MeiliValues {
  SEARCH_ENGINE?: 'sqlite' | 'meilisearch';
  MEILI_HOST?: string;
  MEILI_API_KEY?: string;
  MEILI_INDEX_PREFIX: string;
}

function searchConfig(values: MeiliValues, apiKey: string | undefined, timeoutMs: number): SearchConfig {
  const engine = values.SEARCH_ENGINE ?? (values.MEILI_HOST ? 'meilisearch' : 'sqlite');
  if (engine === 'sqlite') return { engine };
  if (!values.MEILI_HOST) {
    throw new ConfigError('Invalid configuration: MEILI_HOST is required when SEARCH_ENGINE is "meilisearch"');
  }
  return {
    engine,
    meilisearch: {
      host: values.MEILI_HOST,
      apiKey: apiKey ?? values.MEILI_API_KEY,
      indexPrefix: values.MEILI_INDEX_PREFIX,
      timeoutMs,
    },
  };
}

/** The API's HTTP server limits (src/http/server-limits.ts). */
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

const searchRuntime = {
  SEARCH_WORKERS: optional(int(1, 256)),
  SEARCH_CONCURRENCY: optional(int(1, 1_024)),
  SEARCH_QUEUE: optional(int(0, 10_000)),
  SEARCH_TIMEOUT_MS: optional(int(50, 600_000)).default(2_000),
  SEARCH_MAX_WAIT_MS: optional(int(0, 600_000)).default(250),
  SEARCH_KEY_SHARE_PERCENT: optional(int(1, 100)).default(50),
  SEARCH_RANK_ALL_MAX: optional(int(4, 10_000_000)).default(2_000),
  SEARCH_WORKER_NICE: optional(int(0, 19)).default(10),
};

/** How the API runs searches: the worker pool of the embedded engine and admission control. */
export interface SearchRuntimeConfig {
  /** Worker threads of the embedded engine (default: the number of cores). */
  workers: number;
  /** Searches running at once, all partners together. */
  concurrency: number;
  /** Searches waiting for a slot; past it, search_busy. */
  queue: number;
  /** Longest a search may wait for a slot, expected at arrival or seen; past it, search_busy. */
  maxWaitMs: number;
  /** Longest a search may take, waiting included; past it, search_busy (and its worker is replaced). */
  timeoutMs: number;
  /** Share of the running slots and of the waiting places one key may hold, in percent. */
  keySharePercent: number;
  /** Up to this many exposed matches, every match is ranked by relevance; past it, see README. */
  rankAllMax: number;
  /** Niceness of the search threads: lists and /health keep the CPU when searches compete. */
  workerNice: number;
  /** Bytes of ranked results each search thread may keep (its share of CACHE_MB). */
  cacheBytesPerWorker: number;
}

/**
 * Splits the one cache budget (CACHE_MB): a quarter for the search threads' ranked results, the
 * rest for serialized responses. Every cache counts its keys and per-entry overhead.
 */
function cacheBudget(total: number): { response: number; search: number } {
  const search = Math.floor(total / 4);
  return { response: total - search, search };
}

function searchRuntimeConfig(
  v: { SEARCH_WORKERS?: number; SEARCH_CONCURRENCY?: number; SEARCH_QUEUE?: number; SEARCH_MAX_WAIT_MS: number; SEARCH_TIMEOUT_MS: number; SEARCH_KEY_SHARE_PERCENT: number; SEARCH_RANK_ALL_MAX: number; SEARCH_WORKER_NICE: number },
  engine: SearchConfig['engine'],
  searchCacheBytes: number,
  processes: number,
): SearchRuntimeConfig {
  const cores = availableParallelism();
  // About one search thread per core on the host, all API processes together: every thread is
  // started with its process and holds its own views and connection (tens of MB each).
  const workers = v.SEARCH_WORKERS ?? Math.max(1, Math.floor(cores / processes));
  // The embedded engine can run no more searches than it has threads; Meilisearch is another
  // server with its own threads, so more requests may wait on it at once.
  const concurrency = v.SEARCH_CONCURRENCY ?? (engine === 'sqlite' ? workers : 4 * cores);
  return {
    workers,
    concurrency,
    queue: v.SEARCH_QUEUE ?? 2 * concurrency,
    maxWaitMs: v.SEARCH_MAX_WAIT_MS,
    timeoutMs: v.SEARCH_TIMEOUT_MS,
    keySharePercent: v.SEARCH_KEY_SHARE_PERCENT,
    rankAllMax: v.SEARCH_RANK_ALL_MAX,
    workerNice: v.SEARCH_WORKER_NICE,
    cacheBytesPerWorker: Math.floor(searchCacheBytes / workers),
  };
}

const apiSchema = z.object({
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
  // Off by default (see the README's Rate limits): a harness or partner that was not limited
  // yesterday is not refused after an upgrade; operators set it, editors set per-key rates.
  RATE_LIMIT_PER_MINUTE: optional(int(0, 1_000_000_000)).default(0),
  RATE_LIMIT_BURST_SECONDS: optional(int(1, 3_600)).default(10),
  ...serverLimits,
  ...metricsHost,
  METRICS_PORT: optional(int(0, 65_535)),
  SNAPSHOT_MAX_AGE: optional(durationSeconds).default(1_800),
  WEB_CONCURRENCY: optional(int(1, 256)).default(1),
  SHUTDOWN_TIMEOUT_MS: optional(int(0, 600_000)).default(10_000),
  TRUST_PROXY: optional(trustProxy).default(false),
  ...searchRuntime,
});

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
  /** How long a SIGTERM drain may take before the remaining connections are cut. */
  shutdownTimeoutMs: number;
  /** Express's `trust proxy` value: which X-Forwarded-For hops give the client address. */
  trustProxy: boolean | number | string;
}

export function loadApiConfig(env: Env): Readonly<ApiConfig> {
  const v = parse(apiSchema, env);
  const search = searchConfig(v, v.MEILI_SEARCH_KEY, v.MEILI_TIMEOUT_MS);
  const budget = cacheBudget((v.CACHE_MB ?? v.RESPONSE_CACHE_MB ?? 64) * 1024 * 1024);
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
    shutdownTimeoutMs: v.SHUTDOWN_TIMEOUT_MS,
    trustProxy: v.TRUST_PROXY,
  });
}

const workerSchema = z.object({
  ...common,
  ...meiliWorker,
  CMS_BASE_URL: optional(httpUrl),
  CMS_TOKEN: optional(z.string()),
  CMS_TIMEOUT_MS: optional(int(100, 600_000)).default(10_000),
  CMS_MAX_ATTEMPTS: optional(int(1, 20)).default(5),
  CMS_RETRY_BUDGET_MS: optional(int(0, 3_600_000)).default(60_000),
  CMS_MAX_RESPONSE_MB: optional(int(1, 1_024)).default(32),
  CMS_PAGE_SIZE: optional(int(1, 100)).default(100),
  SYNC_CRON: optional(cronExpression).default('*/5 * * * *'),
  SYNC_FULL_CRON: optional(cronExpression).default('0 * * * *'),
  SYNC_OVERLAP_SECONDS: optional(int(0, 86_400)).default(300),
  DATABASE_BUSY_TIMEOUT_MS: optional(int(0, 600_000)).default(30_000),
  FEED_RETENTION_DAYS: optional(int(1, 3_650)).default(30),
  WEBHOOK_PORT: optional(int(0, 65_535)),
  WEBHOOK_HOST: optional(z.string().min(1)).default('127.0.0.1'),
  WEBHOOK_SECRET: optional(z.string().min(16, { error: 'must be at least 16 characters' })),
  WEBHOOK_TOLERANCE_SECONDS: optional(int(1, 86_400)).default(300),
  WEBHOOK_MAX_BODY_KB: optional(int(1, 10_240)).default(64),
  ...metricsHost,
  WORKER_METRICS_PORT: optional(int(0, 65_535)),
});

export interface WorkerConfig {
  databasePath: string;
  busyTimeoutMs: number;
  logLevel: string;
  /** Undefined when CMS_BASE_URL is not set: --status and --reindex need no CMS. */
  cms: CmsConfig | undefined;
  schedule: { incremental: string; full: string };
  overlapSeconds: number;
  search: SearchConfig;
  /** The long-running worker's metrics endpoint; undefined: none. */
  metrics: { port: number; host: string } | undefined;
  feedRetentionDays: number;
  /** Undefined unless WEBHOOK_PORT is set. */
  webhook: WebhookConfig | undefined;
}

export interface WebhookConfig {
  port: number;
  host: string;
  secret: string;
  toleranceSeconds: number;
  maxBodyBytes: number;
}

export interface CmsConfig {
  baseUrl: string;
  token: string | undefined;
  timeoutMs: number;
  maxAttempts: number;
  retryBudgetMs: number;
  maxResponseBytes: number;
  pageSize: number;
}

export function loadWorkerConfig(env: Env): Readonly<WorkerConfig> {
  const v = parse(workerSchema, env);
  return Object.freeze({
    databasePath: resolve(v.DATABASE_PATH),
    busyTimeoutMs: v.DATABASE_BUSY_TIMEOUT_MS,
    logLevel: v.LOG_LEVEL,
    cms:
      v.CMS_BASE_URL === undefined
        ? undefined
        : {
            baseUrl: v.CMS_BASE_URL,
            token: v.CMS_TOKEN,
            timeoutMs: v.CMS_TIMEOUT_MS,
            maxAttempts: v.CMS_MAX_ATTEMPTS,
            retryBudgetMs: v.CMS_RETRY_BUDGET_MS,
            maxResponseBytes: v.CMS_MAX_RESPONSE_MB * 1024 * 1024,
            pageSize: v.CMS_PAGE_SIZE,
          },
    schedule: { incremental: v.SYNC_CRON, full: v.SYNC_FULL_CRON },
    overlapSeconds: v.SYNC_OVERLAP_SECONDS,
    search: searchConfig(v, v.MEILI_ADMIN_KEY, v.MEILI_WORKER_TIMEOUT_MS),
    feedRetentionDays: v.FEED_RETENTION_DAYS,
    webhook: webhookConfig(v),
    metrics: v.WORKER_METRICS_PORT === undefined ? undefined : { port: v.WORKER_METRICS_PORT, host: v.METRICS_HOST },
  });
}

function webhookConfig(v: {
  WEBHOOK_PORT?: number;
  WEBHOOK_HOST: string;
  WEBHOOK_SECRET?: string;
  WEBHOOK_TOLERANCE_SECONDS: number;
  WEBHOOK_MAX_BODY_KB: number;
}): WebhookConfig | undefined {
  if (v.WEBHOOK_PORT === undefined) return undefined;
  if (!v.WEBHOOK_SECRET) throw new ConfigError('Invalid configuration: WEBHOOK_SECRET is required when WEBHOOK_PORT is set');
  return {
    port: v.WEBHOOK_PORT,
    host: v.WEBHOOK_HOST,
    secret: v.WEBHOOK_SECRET,
    toleranceSeconds: v.WEBHOOK_TOLERANCE_SECONDS,
    maxBodyBytes: v.WEBHOOK_MAX_BODY_KB * 1024,
  };
}

const cliSchema = z.object({
  ...common,
  ...keysPath,
  DATABASE_BUSY_TIMEOUT_MS: optional(int(0, 600_000)).default(60_000),
});

export interface CliConfig {
  /** The snapshot: read for `keys init`'s import and `backup --snapshot`, never written. */
  databasePath: string;
  keysDatabasePath: string;
  busyTimeoutMs: number;
}

export function loadCliConfig(env: Env): Readonly<CliConfig> {
  const v = parse(cliSchema, env);
  return Object.freeze({
    databasePath: resolve(v.DATABASE_PATH),
    keysDatabasePath: keysDatabasePath(v),
    busyTimeoutMs: v.DATABASE_BUSY_TIMEOUT_MS,
  });
}

/** The CMS settings, for the commands that read the CMS. */
export function requireCms(config: WorkerConfig): CmsConfig {
  if (!config.cms) {
    throw new ConfigError('Invalid configuration: CMS_BASE_URL is required: the address of the CMS export API');
  }
  return config.cms;
}

const demoSchema = z.object({
  PORT: optional(int(0, 65_535)).default(3000),
  // Not DATABASE_PATH: the demo deletes and rewrites its snapshot at each start, and on a host
  // whose shell exports the production DATABASE_PATH that would replace the live snapshot.
  // A DEMO_ name can only have been set for the demo (tests use it for a temporary folder).
  DEMO_DATABASE_PATH: optional(z.string()).default('data/demo.db'),
});

/** Set in the environment of most operators' shells, and never read by the demo. */
const IGNORED_BY_DEMO = ['DATABASE_PATH', 'KEYS_DATABASE_PATH'] as const;

export interface DemoConfig {
  port: number;
  /** The demo's own snapshot, recreated at each start; its logs go beside it. */
  databasePath: string;
  /** The demo's own keys database beside it, never the real `keys.db` of that folder. */
  keysDatabasePath: string;
  /** The variables of IGNORED_BY_DEMO that are set, for the demo to say it ignores them. */
  ignoredVariables: string[];
}

export function loadDemoConfig(env: Env): Readonly<DemoConfig> {
  const v = parse(demoSchema, env);
  const databasePath = resolve(v.DEMO_DATABASE_PATH);
  const keysDatabasePath = join(dirname(databasePath), 'demo-keys.db');
  if (databasePath === keysDatabasePath) {
    throw new ConfigError('Invalid configuration: DEMO_DATABASE_PATH must not be named demo-keys.db: that is the demo keys database beside it');
  }
  return Object.freeze({
    port: v.PORT,
    databasePath,
    keysDatabasePath,
    ignoredVariables: IGNORED_BY_DEMO.filter((name) => (env[name] ?? '') !== ''),
  });
}
