import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addKey, startApi } from '../../support/api.js';
import { corpusSections, generateCorpus } from '../../support/cms-fixtures.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import {
  dumpSnapshot,
  killWorkers,
  runWorker,
  spawnWorker,
  startWorker,
  syncRuns,
  waitFor,
  workerEnv,
  type SnapshotDump,
} from '../../support/worker.js';

/*
 * A worker killed outright (SIGKILL: no handler runs) while fetching or while applying must
 * leave the last good snapshot whole and readable, and the next run must finish and say what
 * happened to the killed one.
 */

let dir: ReturnType<typeof tempDir>;
let dbPath: string;
let cms: TestCms;
let key: string;
let before: SnapshotDump;
let beforeTotals: { en: number; zh: number };

const env = (vars: Record<string, string> = {}) =>
  workerEnv({ DATABASE_PATH: dbPath, CMS_BASE_URL: cms.url, LOG_LEVEL: 'warn', ...vars });

async function apiTotals(): Promise<{ en: number; zh: number }> {
  const api = await startApi({ databasePath: dbPath });
  try {
    const total = async (locale: string) => {
      const res = await api.request.get('/api/v1/articles').query({ locale, limit: 1 }).set('X-API-Key', key);
      expect(res.status).toBe(200);
      return res.body.meta.total as number;
    };
    return { en: await total('en'), zh: await total('zh') };
  } finally {
    await api.close();
  }
}

/** Integrity of the file and of the FTS index, on a read-write connection (as the next worker opens it). */
function integrity(): string {
  const sqlite = new Database(dbPath);
  try {
    sqlite.exec(`INSERT INTO articles_fts (articles_fts) VALUES ('integrity-check')`);
    return sqlite.pragma('integrity_check', { simple: true }) as string;
  } finally {
    sqlite.close();
  }
}

/** True while another connection holds the write lock (the worker's apply transaction). */
function writeLocked(probe: Database.Database): boolean {
  try {
    probe.exec('BEGIN IMMEDIATE');
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) return true;
    throw error;
  }
  probe.exec('ROLLBACK');
  return false;
}

beforeEach(async () => {
  dir = tempDir();
  dbPath = dir.path('snapshot.db');
  cms = await startTestCms();
  for (const locale of ['en', 'zh'] as const) for (const s of corpusSections(locale)) cms.store.upsertSection(locale, s);
  cms.store.upsertArticles([
    ...generateCorpus({ locale: 'en', count: 40, idPrefix: 'base-en-', seed: 11 }),
    ...generateCorpus({ locale: 'zh', count: 20, idPrefix: 'base-zh-', seed: 12 }),
  ]);
  // The last good snapshot, written by a worker in this process.
  const worker = startWorker({ databasePath: dbPath, cmsUrl: cms.url, pageSize: 100 });
  expect((await worker.run('full')).status).toBe('succeeded');
  worker.close();
  key = addKey(dbPath).key;
  before = dumpSnapshot(dbPath);
  beforeTotals = await apiTotals();
  expect(beforeTotals.en).toBeGreaterThan(0);
  cms.requests.length = 0;
});

afterEach(async () => {
  await killWorkers();
  await cms.close();
  dir.cleanup();
});

/** After the kill: the file is sound, the snapshot is the last good one, the API serves it. */
async function expectLastGoodSnapshot(killedPid: number): Promise<void> {
  expect(integrity()).toBe('ok');
  expect(dumpSnapshot(dbPath)).toEqual(before);
  expect(await apiTotals()).toEqual(beforeTotals);
  expect(syncRuns(dbPath).at(-1)).toMatchObject({ kind: 'full', status: 'running', pid: killedPid, finished_at: null });
}

/** The next --once finishes and records the killed run as interrupted. */
async function expectNextRunRecovers(killedPid: number): Promise<void> {
  cms.setDelay(0);
  const next = await runWorker(['--once'], env());
  expect(next).toMatchObject({ code: 0, stderr: '' });
  const runs = syncRuns(dbPath);
  const killed = runs.find((r) => r.pid === killedPid)!;
  expect(killed).toMatchObject({ status: 'failed', error: 'interrupted: the worker stopped before the run finished' });
  expect(killed.finished_at).not.toBeNull();
  expect(runs.at(-1)).toMatchObject({ status: 'succeeded' });
  expect(integrity()).toBe('ok');
}

describe('a worker killed with SIGKILL', () => {
  it('in the middle of fetching a 20,000-article full sync leaves the last good snapshot readable', async () => {
    cms.store.upsertArticles([
      ...generateCorpus({ locale: 'en', count: 10_000, seed: 21 }),
      ...generateCorpus({ locale: 'zh', count: 10_000, seed: 22 }),
    ]);
    cms.setDelay(10);
    const child = spawnWorker(['--once', '--full'], env({ CMS_PAGE_SIZE: '50' }));

    await waitFor(() => cms.requests.filter((r) => r.path.startsWith('/articles')).length >= 6, {
      timeoutMs: 15_000,
      what: 'six article pages served',
    });
    expect(syncRuns(dbPath).at(-1)).toMatchObject({ status: 'running', pid: child.pid });
    child.child.kill('SIGKILL');
    expect((await child.exited).signal).toBe('SIGKILL');

    await expectLastGoodSnapshot(child.pid);
    await expectNextRunRecovers(child.pid);
  });

  it('while applying a fetched full sync (holding the write lock) leaves the last good snapshot readable', async () => {
    cms.store.upsertArticles(generateCorpus({ locale: 'en', count: 3_000, seed: 31 }));
    const probe = new Database(dbPath, { timeout: 0 });
    try {
      const child = spawnWorker(['--once', '--full'], env({ CMS_PAGE_SIZE: '100' }));
      // zh is read last: once its only page was served, what remains is staging it and the apply.
      await waitFor(() => cms.requests.some((r) => r.path.startsWith('/articles?locale=zh&page=1&')), {
        timeoutMs: 20_000,
        what: 'the last page served',
      });
      await waitFor(() => writeLocked(probe), { timeoutMs: 20_000, intervalMs: 2, what: 'the apply transaction' });
      child.child.kill('SIGKILL');
      expect((await child.exited).signal).toBe('SIGKILL');
      probe.close();

      await expectLastGoodSnapshot(child.pid);
      await expectNextRunRecovers(child.pid);
    } finally {
      if (probe.open) probe.close();
    }
  });
});

describe('a worker stopped with SIGTERM during --once', () => {
  it('rolls the run back, records it failed with the reason, and exits 0 without a failure on stderr', async () => {
    cms.store.upsertArticles(generateCorpus({ locale: 'en', count: 500, seed: 41 }));
    cms.setDelay(50);
    const child = spawnWorker(['--once', '--full'], env({ CMS_PAGE_SIZE: '20' }));
    await waitFor(() => cms.requests.filter((r) => r.path.startsWith('/articles')).length >= 3, { what: 'three pages served' });

    child.child.kill('SIGTERM');
    const exit = await child.exited;

    expect(exit).toEqual({ code: 0, signal: null });
    expect(child.stderr).toBe('');
    expect(child.stdout).toMatch(/full sync failed: stopped before completion/);
    expect(dumpSnapshot(dbPath)).toEqual(before);
    expect(syncRuns(dbPath).at(-1)).toMatchObject({
      pid: child.pid,
      status: 'failed',
      error: 'stopped before completion; nothing from this run was applied',
    });
  });

  it('takes a signal repeated at once (Ctrl-C through npm) as the same stop: exit 0, one rollback', async () => {
    cms.store.upsertArticles(generateCorpus({ locale: 'en', count: 500, seed: 43 }));
    cms.setDelay(50);
    const child = spawnWorker(['--once', '--full'], env({ CMS_PAGE_SIZE: '20', LOG_LEVEL: 'info' }));
    await waitFor(() => cms.requests.filter((r) => r.path.startsWith('/articles')).length >= 3, { what: 'three pages served' });

    // Two different signals: the kernel may merge the same one sent twice before the process
    // runs into one delivery, which would let this test pass without a second signal.
    child.child.kill('SIGTERM');
    child.child.kill('SIGINT');
    const exit = await child.exited;

    expect(exit, child.stdout + child.stderr).toEqual({ code: 0, signal: null });
    expect(child.stderr).toBe('');
    expect(child.stdout).toMatch(/already stopping: repeated signal ignored/);
    expect(child.stdout).not.toMatch(/second signal: exiting now/);
    expect(dumpSnapshot(dbPath)).toEqual(before);
    expect(syncRuns(dbPath).filter((r) => r.pid === child.pid)).toEqual([
      expect.objectContaining({ status: 'failed', error: 'stopped before completion; nothing from this run was applied' }),
    ]);
  });
});
