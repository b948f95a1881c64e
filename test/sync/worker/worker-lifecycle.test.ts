import Database from 'better-sqlite3';
import { createServer, type Server } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signWebhook } from '../../../sync/webhook.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import { killWorkers, query, runWorker, spawnWorker, syncRuns, waitFor, workerEnv, type WorkerProcess } from '../../support/worker.js';

/*
 * The long-lived worker's start, stop and webhook bookkeeping, as real child processes against
 * a real test CMS, real ports on 127.0.0.1 and a real SQLite file.
 */

const SECRET = 'a-webhook-secret-of-some-length';
const STOPPED = 'stopped before completion; nothing from this run was applied';

let dir: ReturnType<typeof tempDir>;
let dbPath: string;
let cms: TestCms;
let occupied: Server | undefined;

const env = (vars: Record<string, string> = {}) =>
  workerEnv({
    DATABASE_PATH: dbPath,
    CMS_BASE_URL: cms.url,
    LOG_LEVEL: 'info',
    // Schedules that never come during a test: only the first run and webhooks start runs.
    SYNC_CRON: '0 0 1 1 *',
    SYNC_FULL_CRON: '0 0 1 1 *',
    ...vars,
  });

const stderrLines = (stderr: string) => stderr.split('\n').filter((line) => line !== '');

/** A port on 127.0.0.1 held by this test process. */
async function occupyPort(): Promise<number> {
  occupied = createServer();
  await new Promise<void>((resolve) => occupied!.listen(0, '127.0.0.1', resolve));
  return (occupied.address() as { port: number }).port;
}

beforeEach(async () => {
  dir = tempDir('worker-lifecycle-');
  dbPath = dir.path('snapshot.db');
  cms = await startTestCms();
  cms.store.upsertSection('en', rawSection({ slug: 'news' }));
  cms.store.upsertSection('zh', rawSection({ slug: 'news' }));
  cms.store.upsertArticles(Array.from({ length: 6 }, (_, i) => rawArticle({ slug: `story-${i}`, section_slug: 'news' })));
});

afterEach(async () => {
  await killWorkers();
  await new Promise<void>((resolve) => (occupied ? occupied.close(() => resolve()) : resolve()));
  occupied = undefined;
  await cms.close();
  dir.cleanup();
});

describe('the daemon start', () => {
  it('with WEBHOOK_PORT taken, exits 1 with one line naming WEBHOOK_PORT, having started nothing', async () => {
    const port = await occupyPort();
    // A slow CMS: a first sync started before the bind would still be running when it failed.
    cms.setDelay(300);

    const result = await runWorker([], env({ WEBHOOK_PORT: String(port), WEBHOOK_SECRET: SECRET, WORKER_METRICS_PORT: '0' }), 10_000);

    expect(result.code).toBe(1);
    const lines = stderrLines(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^Cannot listen for CMS webhooks on 127\\.0\\.0\\.1:${port}: .*WEBHOOK_PORT`));
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stdout).not.toMatch(/sync worker started/);
    expect(syncRuns(dbPath)).toEqual([]);
    expect(cms.requests).toHaveLength(0);
  });

  it('with WORKER_METRICS_PORT taken, exits 1 with one line naming WORKER_METRICS_PORT, having started nothing', async () => {
    const port = await occupyPort();

    const result = await runWorker([], env({ WORKER_METRICS_PORT: String(port) }), 10_000);

    expect(result.code).toBe(1);
    const lines = stderrLines(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/WORKER_METRICS_PORT/);
    expect(syncRuns(dbPath)).toEqual([]);
    expect(cms.requests).toHaveLength(0);
  });
});

describe('stopping on a signal', () => {
  /** Starts the worker against a slow CMS and waits until its first run is under way. */
  async function duringARun(args: string[] = []): Promise<WorkerProcess> {
    cms.setDelay(400);
    const worker = spawnWorker(args, env({ CMS_PAGE_SIZE: '2' }));
    await waitFor(() => syncRuns(dbPath).some((r) => r.status === 'running' && r.pid === worker.pid), {
      timeoutMs: 15_000,
      what: 'a run in progress',
    });
    return worker;
  }

  it('the daemon takes a signal repeated at once (Ctrl-C through npm) as one stop: exit 0, run recorded as stopped', async () => {
    const worker = await duringARun([]);

    // Two different signals: the kernel may merge the same one sent twice before the process
    // runs into one delivery, which would let this test pass without a second signal.
    worker.child.kill('SIGTERM');
    worker.child.kill('SIGINT');
    const exit = await worker.exited;

    expect(exit, worker.stdout + worker.stderr).toEqual({ code: 0, signal: null });
    expect(worker.stderr).toBe('');
    expect(syncRuns(dbPath)).toEqual([expect.objectContaining({ status: 'failed', error: STOPPED, finished_at: expect.any(String) })]);
    expect(worker.stdout).toMatch(/already stopping: repeated signal ignored/);
    expect(worker.stdout).not.toMatch(/second signal: exiting now/);
  });
});

describe('recording CMS webhooks', () => {
  let worker: WorkerProcess;
  let base: string;

  const lastWebhook = () => query<{ value: string }>(dbPath, `SELECT value FROM worker_state WHERE key = 'last_webhook'`);
  const idle = () => syncRuns(dbPath).every((r) => r.status !== 'running');

  function signed(body: string) {
    const timestamp = Math.floor(Date.now() / 1000);
    return fetch(`${base}/hooks/cms`, {
      method: 'POST',
      headers: { 'X-Webhook-Timestamp': String(timestamp), 'X-Webhook-Signature': signWebhook(SECRET, timestamp, body) },
      body,
    });
  }

  /**
   * The worker handles one request at a time on one thread: once it has answered this one, it
   * has finished with every request answered before (the record is written in the same turn).
   */
  async function barrier(): Promise<void> {
    expect((await fetch(`${base}/elsewhere`)).status).toBe(404);
  }

  beforeEach(async () => {
    // A short busy timeout: a locked database fails a write in 200 ms instead of 30 s.
    worker = spawnWorker([], env({ WEBHOOK_PORT: '0', WEBHOOK_SECRET: SECRET, DATABASE_BUSY_TIMEOUT_MS: '200' }));
    await worker.waitForStdout(/CMS webhook listening/, 20_000);
    base = `http://127.0.0.1:${/"webhookPort":(\d+)/.exec(worker.stdout)![1]}`;
    await waitFor(() => syncRuns(dbPath).some((r) => r.status === 'succeeded') && idle(), { timeoutMs: 20_000, what: 'the first sync' });
  });

  it('writes nothing for a refused call', async () => {
    const unsigned = await fetch(`${base}/hooks/cms`, { method: 'POST', body: '{}' });
    expect(unsigned.status).toBe(401);
    const forged = await fetch(`${base}/hooks/cms`, {
      method: 'POST',
      headers: { 'X-Webhook-Timestamp': String(Math.floor(Date.now() / 1000)), 'X-Webhook-Signature': 'sha256=00' },
      body: '{}',
    });
    expect(forged.status).toBe(401);
    await barrier();

    expect(lastWebhook()).toEqual([]);
    expect(worker.stdout).toMatch(/CMS webhook refused: missing_signature/);
  });

  it('survives a database too locked to record a call: answers 202, logs it, and records the next call', async () => {
    const locker = new Database(dbPath);
    try {
      locker.exec('BEGIN IMMEDIATE');
      const res = await signed(JSON.stringify({ event: 'article.updated' }));
      expect(res.status).toBe(202);
      await barrier();
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    await waitFor(() => idle(), { what: 'the run requested while locked to end' });
    expect(worker.child.exitCode).toBeNull();
    // Log lines reach stdout asynchronously (one write per turn, on libuv's threads): wait for it.
    await worker.waitForStdout(/could not record the last CMS webhook/, 10_000);

    const next = await signed(JSON.stringify({ event: 'article.updated', n: 2 }));
    expect(next.status).toBe(202);
    await barrier();
    expect(JSON.parse(lastWebhook()[0]!.value)).toMatchObject({ status: 202, outcome: expect.stringMatching(/^accepted, sync /) });

    // --status shows it.
    const status = await runWorker(['--status'], workerEnv({ DATABASE_PATH: dbPath }));
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/Last webhook: .*202.*accepted, sync (started|queued)/);
  });
});
