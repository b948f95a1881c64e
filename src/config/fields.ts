import cron from 'node-cron';
import { dirname, join, resolve } from 'node:path';
import proxyaddr from 'proxy-addr';
import { z } from 'zod';
import { ConfigError } from '../errors.js';

/*
 * The only reader of process.env (through parse): the variables' rules shared by the API, the
 * worker and the CLI. Each entry point calls one load function once (api.ts, worker.ts,
 * cli.ts, demo.ts) and passes the frozen result down. A bad value stops the process with a
 * message naming the variable.
 */

export type Env = Record<string, string | undefined>;

// An empty variable (`PORT=`) counts as unset, as shells and .env files often leave them.
export const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

export const int = (min: number, max: number) =>
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

export const httpUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// address' })
  .transform((u) => u.replace(/\/+$/, ''));

export const cronExpression = z.string().refine((v) => cron.validate(v), {
  error: 'must be a cron expression, e.g. "*/5 * * * *"',
});

// A duration: whole seconds, or a number with s, m, h or d (`90`, `45m`, `2h`, `1d`).
const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400 };
export const durationSeconds = z
  .string()
  .regex(/^[0-9]{1,9}[smhd]?$/, { error: 'must be a duration such as 900, 45m, 2h or 1d' })
  .transform((v) => {
    const unit = /[smhd]$/.test(v) ? v.slice(-1) : 's';
    return Number.parseInt(v, 10) * (DURATION_UNITS[unit] ?? 1);
  })
  .pipe(z.number().min(1, { error: 'must be at least one second' }));

// Express's `trust proxy` setting, in the forms an operator can write in an environment variable.
export const trustProxy = z
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

export const common = {
  DATABASE_PATH: optional(z.string()).default('data/syndication.db'),
  LOG_LEVEL: optional(z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` })).default('info'),
};

// The keys database lives beside the snapshot unless told otherwise (docs/configuration.md).
export const keysPath = {
  KEYS_DATABASE_PATH: optional(z.string()),
};

export function keysDatabasePath(v: { DATABASE_PATH: string; KEYS_DATABASE_PATH?: string }): string {
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
export const metricsHost = {
  METRICS_HOST: optional(z.string().min(1)).default('127.0.0.1'),
};

// The API only searches: a search-only key is enough (and safer) there; the worker manages
// indexes, documents, settings and tasks. MEILI_API_KEY is the fallback for both.
export const meiliApi = { ...meili, MEILI_SEARCH_KEY: optional(z.string()) };
export const meiliWorker = {
  ...meili,
  MEILI_ADMIN_KEY: optional(z.string()),
  MEILI_WORKER_TIMEOUT_MS: optional(int(1_000, 3_600_000)).default(30_000),
};

// Secrets are never echoed back in an error message.
const SECRETS = new Set(['CMS_TOKEN', 'MEILI_API_KEY', 'MEILI_SEARCH_KEY', 'MEILI_ADMIN_KEY', 'WEBHOOK_SECRET']);

export function parse<S extends z.ZodObject>(schema: S, env: Env): z.output<S> {
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
