import { z } from 'zod';
import { apiSchema, DEFAULT_CACHE_MB } from './api.js';
import { cliSchema } from './cli.js';
import { demoSchema } from './demo.js';
import { workerSchema } from './worker.js';

/*
 * The configuration reference (docs/configuration.md) is generated from the schemas above:
 * which variables exist, which process reads each and its default come from them; only the
 * meaning is written here, beside them. `npm run docs:config` rewrites the file, and
 * test/unit/config/config-reference.test.ts fails when a variable has no meaning here, when the file
 * is stale, or when .env.example lacks a variable (or lists one no schema reads).
 */

export const PROCESSES = [
  { name: 'API', schema: apiSchema },
  { name: 'worker', schema: workerSchema },
  { name: 'keys CLI', schema: cliSchema },
  { name: 'demo', schema: demoSchema },
] as const;

interface Meaning {
  /** One or two sentences for the operator; Markdown, links relative to docs/. */
  meaning: string;
  /**
   * Only for a variable whose schema has no default: what applies when it is unset (a value
   * worked out from others, or "none"). A schema default is always shown as the schema has it.
   */
  unset?: string;
}

export const MEANINGS: Record<string, Meaning> = {
  DATABASE_PATH: {
    meaning:
      'The SQLite snapshot (relative to the working directory). The worker creates it; the API only reads it; the keys CLI only reads it (`init`\'s import, `backup --snapshot`).',
  },
  KEYS_DATABASE_PATH: {
    meaning:
      'The keys database, the one file to back up. Only `keys init` (or `create --create`) creates it; the API reads it (and writes last-used times); a missing file makes the API answer 503.',
    unset: '`keys.db` beside the snapshot',
  },
  DATABASE_BUSY_TIMEOUT_MS: {
    meaning:
      'How long to wait for a lock before giving up, on the snapshot and the keys database alike (the API then answers 503).',
  },
  LOG_LEVEL: { meaning: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`.' },
  PORT: { meaning: 'The partners\' port (the demo\'s API too).' },
  HOST: { meaning: 'Address to listen on.' },
  CACHE_MB: {
    meaning:
      'One memory budget for every cache of an API process: three quarters for serialized responses, a quarter for the search threads\' ranked results (split between them). Each entry is weighed with its key and a fixed per-entry overhead. 0 turns caching off.',
    unset: `\`RESPONSE_CACHE_MB\`, else ${DEFAULT_CACHE_MB}`,
  },
  RESPONSE_CACHE_MB: { meaning: 'The former name of `CACHE_MB`, still read when `CACHE_MB` is not set.', unset: 'none' },
  SEARCH_WORKERS: {
    meaning:
      'Worker threads that run embedded (SQLite) searches, off the event loop, started with the API (about 65 MB each on 110,000 articles). See [Sizing](search.md#sizing).',
    unset: 'cores / `WEB_CONCURRENCY`, less one for the main thread (at least 1)',
  },
  SEARCH_CONCURRENCY: {
    meaning: 'Searches running at once, all partners together.',
    unset: '`SEARCH_WORKERS` (sqlite), 4 × cores (meilisearch)',
  },
  SEARCH_QUEUE: {
    meaning:
      'Places for searches waiting for a slot, all partners together; one partner alone may take them all. When they are all taken, the newest search of the partner with the most waiting gets `503 search_busy` (see [Search](search.md)).',
    unset: '64 × `SEARCH_CONCURRENCY`',
  },
  SEARCH_MAX_WAIT_MS: {
    meaning:
      'Longest a search may wait for a slot: one expected to wait longer (the searches ahead of it, times how long searches have been taking) gets `503 search_busy` at arrival, and one still waiting then gets it then. 0: never wait.',
  },
  SEARCH_TIMEOUT_MS: {
    meaning:
      'Longest a search may take from its arrival, waiting included; past it, `503 search_busy`, and the thread running it is replaced.',
  },
  SEARCH_RANK_ALL_MAX: {
    meaning: 'Up to this many matches every match is ranked by relevance; past it, see [Search](search.md#how-the-embedded-engine-keeps-the-api-responsive) (cheap common terms).',
  },
  SEARCH_COMMON_MIN: {
    meaning:
      'A word in at least this many articles is "common": never scored by the FTS index, only matched from cached id sets; a query of common words only is ranked from titles and excerpts. Lower: faster, less weight on bodies. See [Search](search.md).',
  },
  SEARCH_TERM_CACHE_MB: {
    meaning: 'Per search thread: MB of per-word id lists kept across queries, read from the snapshot\'s champion lists (`SEARCH_LISTS_MB`) or from the index (0: none kept; every query reads its words again).',
  },
  SEARCH_WORKER_NICE: {
    meaning: 'Niceness (0-19) of the search threads, so that lists and `/health` win the CPU when both want it (Linux: per thread).',
  },
  PUBLIC_BASE_URL: {
    meaning:
      'The address partners use (`https://api.example.com`, or a path such as `/syndication`), given as `servers` in the OpenAPI document. Its path also prefixes `Link` targets, and requests are routed with or without it, so the same setting works behind a proxy that keeps the prefix and one that strips it (see operations.md, behind a reverse proxy). `/` means "wherever the document was fetched from".',
  },
  HTTP_HEADERS_TIMEOUT_MS: {
    meaning:
      'Time a client has to send the request headers; then `408` and the connection is closed. Not more than `HTTP_REQUEST_TIMEOUT_MS`.',
  },
  HTTP_REQUEST_TIMEOUT_MS: {
    meaning: 'Time a client has to send the whole request; also how long a socket may stay silent mid-response.',
  },
  HTTP_KEEP_ALIVE_TIMEOUT_MS: {
    meaning:
      'How long an idle keep-alive connection stays open. Behind a proxy, longer than the proxy\'s own idle timeout (see [Timeouts and limits](security.md#timeouts-and-limits)).',
  },
  FAST_PATH: {
    meaning:
      '`on`: repeated cacheable reads are answered from the response cache without entering Express; `off`: Express answers every request, with the same answers (CI runs the HTTP suites both ways). See docs/architecture.md.',
  },
  HTTP_MAX_CONNECTIONS: {
    meaning:
      'Open connections per API process. At the cap a new connection takes the place of the longest-idle keep-alive connection, then of the oldest one that has not sent a whole request; it is refused only when every connection has a request under way. Per-client limits belong in a proxy in front.',
  },
  RATE_LIMIT_PER_MINUTE: {
    meaning:
      'Default request rate of each partner key (a key\'s own rate, set by the editors, wins). `0`: no limit for keys without their own rate. `600` is a sensible production value. See [Rate limits](partners.md#rate-limits).',
  },
  RATE_LIMIT_BURST_SECONDS: {
    meaning: 'How many seconds\' worth of its rate a key may send at once (600/min and 10 s: 100 requests).',
  },
  RATE_LIMIT_PROCESSES: {
    meaning:
      'API processes that share each key\'s rate, each enforcing its share (1/N of the rate, `ceil(burst/N)`): set it to every process behind the balancer, on every host, when processes are started on their own rather than by `WEB_CONCURRENCY` (see [Rate limits](operations.md#rate-limits)).',
    unset: '`WEB_CONCURRENCY`',
  },
  WEB_CONCURRENCY: {
    meaning:
      'API processes on this host, sharing `PORT` through node:cluster (see [Several processes per host](operations.md#several-processes-per-host)).',
  },
  SHUTDOWN_TIMEOUT_MS: {
    meaning: 'How long a SIGTERM drain may last before the remaining connections are cut (see [Stopping](operations.md#stopping)).',
  },
  SHUTDOWN_DELAY_MS: {
    meaning:
      'On SIGTERM, how long `/health` answers 503 `draining` while the process keeps serving, so that a balancer\'s health check takes it out of rotation before it stops accepting; skipped when nothing asked `/health` in the last minute, and on SIGINT (see [Stopping](operations.md#stopping)).',
  },
  SNAPSHOT_MAX_AGE: {
    meaning:
      'Past this age of the snapshot `/health` says `degraded`: seconds, or a number with `s`, `m`, `h`, `d` (the default, 1800, is `30m`).',
  },
  TRUST_PROXY: {
    meaning:
      'Which `X-Forwarded-For` hops give the client address in the request log: Express\'s [`trust proxy`](https://expressjs.com/en/guide/behind-proxies.html) values (`false`, `true`, a number of hops, or addresses, subnets, `loopback`, `linklocal`, `uniquelocal`, comma-separated).',
  },
  METRICS_PORT: {
    meaning:
      'Serve Prometheus metrics at `/metrics` on this port, apart from the partners\' port (see [Metrics](operations.md#metrics)).',
    unset: 'none (off)',
  },
  METRICS_HOST: { meaning: 'Interface the metrics ports listen on; keep it private.' },
  CMS_BASE_URL: {
    meaning: 'Base address of the CMS export API, e.g. `https://cms.example.com/export` ([CMS contract](specs/cms-contract.md)).',
    unset: 'none (required to sync)',
  },
  CMS_TOKEN: { meaning: 'Sent as `Authorization: Bearer ...`; never logged.', unset: 'none' },
  CMS_TIMEOUT_MS: { meaning: 'Per request.' },
  CMS_MAX_ATTEMPTS: { meaning: 'Attempts per request on connection errors, timeouts, 5xx and 429.' },
  CMS_RETRY_BUDGET_MS: { meaning: 'Total time one request may spend retrying.' },
  CMS_MAX_RESPONSE_MB: { meaning: 'Largest response accepted.' },
  CMS_PAGE_SIZE: { meaning: '`per_page` asked of the CMS (1 to 100).' },
  SYNC_CRON: { meaning: 'Incremental syncs.' },
  SYNC_FULL_CRON: { meaning: 'Full reconciles.' },
  SYNC_OVERLAP_SECONDS: {
    meaning: 'An incremental sync asks for changes since the last successful sync began, minus this.',
  },
  WORKER_METRICS_PORT: {
    meaning: 'The long-running worker\'s Prometheus metrics at `/metrics` on this port.',
    unset: 'none (off)',
  },
  DEMO_DATABASE_PATH: {
    meaning:
      'The demo\'s own snapshot (its keys in `demo-keys.db` beside it). The demo never reads `DATABASE_PATH` or `KEYS_DATABASE_PATH`, so it cannot overwrite a real snapshot.',
  },
  SEARCH_ENGINE: { meaning: '`sqlite` or `meilisearch`.', unset: '`meilisearch` if `MEILI_HOST` is set, else `sqlite`' },
  MEILI_HOST: { meaning: 'e.g. `http://127.0.0.1:7700`.', unset: 'none' },
  MEILI_API_KEY: {
    meaning:
      'Fallback for the two keys below. See [Meilisearch](search.md#meilisearch-optional) for which key goes where.',
    unset: 'none',
  },
  MEILI_SEARCH_KEY: {
    meaning: 'The API\'s key: a search-only key is enough (`search` on `<prefix>_*`).',
    unset: '`MEILI_API_KEY`',
  },
  MEILI_ADMIN_KEY: {
    meaning: 'The worker\'s key: indexes, documents, settings, tasks, swaps, version (an admin key).',
    unset: '`MEILI_API_KEY`',
  },
  MEILI_INDEX_PREFIX: { meaning: 'Indexes are `<prefix>_en` and `<prefix>_zh`.' },
  MEILI_TIMEOUT_MS: { meaning: 'Per search request to Meilisearch (the API\'s; the worker uses `MEILI_WORKER_TIMEOUT_MS`).' },
  MEILI_WORKER_TIMEOUT_MS: {
    meaning:
      'Per worker request to Meilisearch; an upload gets this plus `uploadTimeoutMsPerMb` per MB (meilisearch.config.json).',
  },
  FEED_RETENTION_DAYS: {
    meaning:
      'Deletes stay in the change feed (and the detail answers `article_removed`) at least this long; older ones are pruned after a sync.',
  },
  SEARCH_LISTS_MIN_DOCS: {
    meaning:
      'Embedded engine: the worker keeps, in the snapshot, the id lists of the words in at least this many articles (champion lists), so that a query of common words reads no doclist. See [Search](search.md#how-the-embedded-engine-keeps-the-api-responsive).',
  },
  SEARCH_LISTS_MB: {
    meaning:
      'Embedded engine: most MB of champion lists kept in the snapshot, the most common words first (about 300 words at 110,000 articles with the default); `0`: none. Recomputed on each full sync (a few seconds), followed on incremental ones.',
  },
  WEBHOOK_PORT: {
    meaning:
      'Listen for CMS webhooks (`POST /hooks/cms`) on this port; `0` picks a free one (logged). See [CMS webhooks](operations.md#cms-webhooks).',
    unset: 'none (off)',
  },
  WEBHOOK_HOST: { meaning: 'Address the webhook listens on; loopback unless a proxy or the CMS needs another.' },
  WEBHOOK_SECRET: {
    meaning: 'Shared secret of the HMAC-SHA256 signature, at least 16 characters; never logged.',
    unset: 'none (required with `WEBHOOK_PORT`)',
  },
  WEBHOOK_TOLERANCE_SECONDS: {
    meaning: 'How far a webhook\'s timestamp may be from the worker\'s clock; older calls are refused as replays.',
  },
  WEBHOOK_MAX_BODY_KB: { meaning: 'Largest webhook body accepted (413 beyond).' },
};

export interface ReferenceRow {
  name: string;
  processes: string[];
  /** Per process, the schema's default, or undefined when the schema has none. */
  defaults: (string | undefined)[];
}

/** The schema's default of one field, as an operator would write it; undefined when it has none. */
export function schemaDefault(field: z.ZodType): string | undefined {
  if (!(field instanceof z.ZodDefault)) return undefined;
  const value: unknown = field.def.defaultValue;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Every variable any process reads, in the order of the processes and their schemas. */
export function referenceRows(): ReferenceRow[] {
  const rows = new Map<string, ReferenceRow>();
  for (const { name: process, schema } of PROCESSES) {
    for (const [name, field] of Object.entries(schema.shape)) {
      const row = rows.get(name) ?? { name, processes: [], defaults: [] };
      row.processes.push(process);
      row.defaults.push(schemaDefault(field as z.ZodType));
      rows.set(name, row);
    }
  }
  return [...rows.values()];
}

function usedBy(processes: string[]): string {
  const all = ['API', 'worker', 'keys CLI'];
  if (all.every((p) => processes.includes(p))) return ['all', ...processes.filter((p) => !all.includes(p))].join(', ');
  return processes.join(', ');
}

function defaultText(row: ReferenceRow): string {
  const known = row.defaults.filter((d): d is string => d !== undefined);
  if (known.length === 0) {
    const unset = MEANINGS[row.name]?.unset;
    if (unset === undefined) throw new Error(`${row.name} has no default in its schema: say what applies when unset (src/config/reference.ts)`);
    return unset;
  }
  if (new Set(row.defaults).size === 1) return `\`${known[0]}\``;
  return row.processes.map((p, i) => `${p} \`${row.defaults[i] ?? 'none'}\``).join(', ');
}

const escapeCell = (text: string) => text.replace(/\|/g, '\\|');

/** docs/configuration.md, whole. */
export function renderConfigReference(): string {
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated from the zod schemas of src/config/ by `npm run docs:config` (src/config/reference.ts). Do not edit: edit the schema or the meaning there. -->',
    '',
    'Every setting is an environment variable, read once when a process starts and checked: a bad',
    'value stops the process with one line naming the variable, and exit code 1. An empty value',
    'counts as unset. `.env.example` lists them all with their defaults: copy it to `.env`',
    '(git-ignored, since it may hold `CMS_TOKEN`), which foreman, honcho and `node --env-file=.env` read.',
    '',
    'Processes: the API (`npm start`), the sync worker (`npm run sync`), the editors\' keys CLI',
    '(`npm run keys`) and the demo (`npm run demo`, which reads only its own variables); "all" is the',
    'API, the worker and the keys CLI. Where the schema has no default, the Default column says what applies when unset.',
    '',
    '| Variable | Used by | Default | Meaning |',
    '|---|---|---|---|',
  ];
  for (const row of referenceRows()) {
    const meaning = MEANINGS[row.name];
    if (!meaning) throw new Error(`${row.name} has no meaning in src/config/reference.ts`);
    lines.push(`| \`${row.name}\` | ${usedBy(row.processes)} | ${escapeCell(defaultText(row))} | ${escapeCell(meaning.meaning)} |`);
  }
  return `${lines.join('\n')}\n`;
}
