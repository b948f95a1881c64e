import { resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { common, cronExpression, httpUrl, int, meiliWorker, metricsHost, optional, parse, type Env } from './fields.js';
import { DEFAULT_COMMON_MIN, searchConfig, type SearchConfig } from './search.js';

/* The sync worker's configuration (npm run sync). */

export const workerSchema = z.object({
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
  SEARCH_LISTS_MIN_DOCS: optional(int(1, 10_000_000)).default(DEFAULT_COMMON_MIN),
  SEARCH_LISTS_MB: optional(int(0, 1_024)).default(8),
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
  /** The embedded engine's champion lists the worker keeps in the snapshot (src/search/sqlite/common-lists.ts). */
  searchLists: { minDocs: number; maxBytes: number };
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
    searchLists: { minDocs: v.SEARCH_LISTS_MIN_DOCS, maxBytes: v.SEARCH_LISTS_MB * 1024 * 1024 },
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

/** The CMS settings, for the commands that read the CMS. */
export function requireCms(config: WorkerConfig): CmsConfig {
  if (!config.cms) {
    throw new ConfigError('Invalid configuration: CMS_BASE_URL is required: the address of the CMS export API');
  }
  return config.cms;
}
