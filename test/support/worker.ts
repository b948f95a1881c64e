import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openWriter, type Db } from '../../src/db/sqlite/connection.js';
import type { Logger } from '../../src/logger.js';
import type { Clock } from '../../src/lib/time.js';
import { createHttpCmsAdapter } from '../../sync/cms/http-adapter.js';
import { createCmsHttpClient } from '../../sync/cms/http-client.js';
import type { CmsAdapter } from '../../sync/cms/types.js';
import { runSync, type SyncDeps, type SyncKind, type SyncSummary } from '../../sync/run-sync.js';
import { memoryLogger } from './api.js';

/*
 * The sync worker wired in-process against a test CMS and a real SQLite file, plus what the
 * worker's tests need around it: a comparable dump of the snapshot, the sync_runs rows, a
 * condition poller and the worker's real entry point as a child process.
 */

export interface WorkerOptions {
  databasePath: string;
  /** The test CMS's url; no CMS adapter when absent (a reindex needs none). */
  cmsUrl?: string;
  token?: string;
  clock?: Clock;
  pageSize?: number;
  overlapSeconds?: number;
  maxAttempts?: number;
  retryBudgetMs?: number;
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** Records waits between attempts instead of sleeping (see CmsHttpClientOptions.sleep). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  logLevel?: string;
}

export interface TestWorker {
  db: Db;
  cms: CmsAdapter | undefined;
  logger: Logger;
  /** Every log line the worker (and its CMS client) wrote, as JSON strings. */
  logs: string[];
  deps: SyncDeps;
  run(kind: SyncKind | 'auto', overrides?: Partial<SyncDeps>): Promise<SyncSummary>;
  close(): void;
}

/** The worker's dependencies as sync/main.ts builds them, with test-sized timings. */
export function startWorker(options: WorkerOptions): TestWorker {
  const { logger, lines } = memoryLogger(options.logLevel ?? 'info');
  const db = openWriter(options.databasePath, { busyTimeoutMs: 5_000 });
  const cms =
    options.cmsUrl === undefined
      ? undefined
      : createHttpCmsAdapter({
          client: createCmsHttpClient({
            baseUrl: options.cmsUrl,
            token: options.token,
            timeoutMs: options.timeoutMs ?? 2_000,
            maxAttempts: options.maxAttempts ?? 3,
            retryBudgetMs: options.retryBudgetMs ?? 2_000,
            baseDelayMs: 1,
            maxDelayMs: 5,
            maxResponseBytes: options.maxResponseBytes ?? 1 << 20,
            logger,
            ...(options.sleep ? { sleep: options.sleep } : {}),
          }),
        });
  const deps: SyncDeps = {
    db,
    cms,
    logger,
    clock: options.clock ?? Date.now,
    pageSize: options.pageSize ?? 10,
    overlapSeconds: options.overlapSeconds ?? 60,
  };
  let closed = false;
  return {
    db,
    cms,
    logger,
    logs: lines,
    deps,
    run: (kind, overrides = {}) => runSync({ ...deps, ...overrides }, kind),
    close() {
      if (closed) return;
      closed = true;
      db.$client.close();
    },
  };
}

/** Log lines parsed, for assertions on fields. */
export function parsedLogs(lines: readonly string[]): Array<Record<string, unknown>> {
  return lines.flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

export interface SnapshotDump {
  sections: unknown[];
  articles: unknown[];
  snapshotState: unknown[];
  apiKeys: unknown[];
  fts: { rowids: number[]; count: number; shadowDigest: string };
}

/**
 * Everything a reader of the snapshot can see, through a fresh read-only connection (so only
 * committed data counts): sections, articles (all columns), snapshot_state, api_keys and the
 * full-text index (its row ids and a digest of its shadow tables, so that two dumps are equal
 * only when the index is byte-for-byte the same). sync_runs and worker_state are not content.
 */
export function dumpSnapshot(path: string): SnapshotDump {
  const sqlite = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return sqlite.transaction(() => {
      const all = (sql: string) => sqlite.prepare(sql).all();
      const shadow = createHash('sha256');
      const shadowTables = sqlite
        .prepare<[], { name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'articles_fts_%' ORDER BY name`)
        .all();
      for (const { name } of shadowTables) {
        shadow.update(`${name}\n`);
        for (const row of sqlite.prepare(`SELECT * FROM "${name}" ORDER BY 1`).raw().all() as unknown[][]) {
          shadow.update(JSON.stringify(row.map((v) => (Buffer.isBuffer(v) ? v.toString('hex') : v))));
        }
      }
      const rowids = sqlite
        .prepare<[], { rowid: number }>('SELECT rowid FROM articles_fts ORDER BY rowid')
        .all()
        .map((r) => r.rowid);
      return {
        sections: all('SELECT * FROM sections ORDER BY locale, slug'),
        articles: all('SELECT * FROM articles ORDER BY id'),
        snapshotState: all('SELECT * FROM snapshot_state ORDER BY locale'),
        apiKeys: all('SELECT * FROM api_keys ORDER BY id'),
        fts: { rowids, count: rowids.length, shadowDigest: shadow.digest('hex') },
      };
    })();
  } finally {
    sqlite.close();
  }
}

/** Runs a read-only query on a fresh connection. */
export function query<T = Record<string, unknown>>(path: string, sql: string, ...params: unknown[]): T[] {
  const sqlite = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return sqlite.prepare(sql).all(...params) as T[];
  } finally {
    sqlite.close();
  }
}

export interface SyncRunView {
  id: number;
  kind: string;
  status: string;
  started_at: string;
  finished_at: string | null;
  fetched: number;
  upserted: number;
  removed: number;
  rejected: number;
  error: string | null;
  pid: number;
  host: string;
}

export function syncRuns(path: string): SyncRunView[] {
  if (!existsSync(path)) return [];
  try {
    return query<SyncRunView>(path, 'SELECT * FROM sync_runs ORDER BY id');
  } catch {
    // The file exists but its schema is not there yet (a child process is migrating it).
    return [];
  }
}

/** Ids of articles whose index entry matches an FTS5 expression, straight from the index. */
export function ftsMatch(path: string, match: string): number[] {
  return query<{ rowid: number }>(path, 'SELECT rowid FROM articles_fts WHERE articles_fts MATCH ? ORDER BY rowid', match).map(
    (r) => r.rowid,
  );
}

type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

/** Polls `check` until it returns something truthy, and returns it; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 10, what = 'condition' }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Truthy<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

// ---------------------------------------------------------------------------------------------
// The real entry point as a child process.

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const WORKER_ENTRY = fileURLToPath(new URL('../../dist/sync/main.js', import.meta.url));

/** Fails early with the fix when the worker has not been built. */
export function assertWorkerBuilt(): void {
  if (!existsSync(WORKER_ENTRY)) {
    throw new Error(`${WORKER_ENTRY} is missing: build first with npx tsc -p tsconfig.json`);
  }
}

/** A clean environment: PATH and the given variables only (undefined ones are left out). */
export function workerEnv(vars: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  for (const [name, value] of Object.entries(vars)) if (value !== undefined) env[name] = value;
  return env;
}

export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  readonly stdout: string;
  readonly stderr: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when stdout matches (log lines are JSON, so match on message text). */
  waitForStdout(pattern: RegExp, timeoutMs?: number): Promise<void>;
}

const children = new Set<ChildProcess>();

/** Starts `node dist/sync/main.js ...args` in the repository root. */
export function spawnWorker(args: string[], env: NodeJS.ProcessEnv): WorkerProcess {
  assertWorkerBuilt();
  const child = spawn(process.execPath, [WORKER_ENTRY, ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  return {
    child,
    pid: child.pid!,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
    waitForStdout: (pattern, timeoutMs = 10_000) =>
      waitFor(() => pattern.test(stdout), { timeoutMs, what: `worker output ${pattern}` }).then(() => undefined),
  };
}

/** Runs the worker to its end; kills it (and fails) when it takes longer than `timeoutMs`. */
export async function runWorker(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 20_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const worker = spawnWorker(args, env);
  const timer = setTimeout(() => worker.child.kill('SIGKILL'), timeoutMs);
  try {
    const { code, signal } = await worker.exited;
    if (signal === 'SIGKILL') throw new Error(`worker ${args.join(' ')} did not finish within ${timeoutMs} ms:\n${worker.stderr}`);
    return { code, signal, stdout: worker.stdout, stderr: worker.stderr };
  } finally {
    clearTimeout(timer);
  }
}

/** Kills the child processes this file started that are still running (for afterEach). */
export async function killWorkers(): Promise<void> {
  const running = [...children];
  await Promise.all(
    running.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('close', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}
