import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import { dumpSnapshot, killWorkers, parsedLogs, spawnWorker, startWorker, syncRuns, waitFor, workerEnv } from '../../support/worker.js';

/*
 * The long-lived worker (no flags): node-cron with a seconds field ticks every second, the
 * hourly full reconcile is moved out of the way.
 */

let dir: ReturnType<typeof tempDir>;
let dbPath: string;
let cms: TestCms;

const daemonEnv = (vars: Record<string, string> = {}) =>
  workerEnv({
    DATABASE_PATH: dbPath,
    CMS_BASE_URL: cms.url,
    LOG_LEVEL: 'info',
    SYNC_CRON: '* * * * * *',
    SYNC_FULL_CRON: '0 0 1 1 *',
    CMS_MAX_ATTEMPTS: '2',
    ...vars,
  });

beforeEach(async () => {
  dir = tempDir();
  dbPath = dir.path('snapshot.db');
  cms = await startTestCms();
  cms.store.upsertSection('en', rawSection({ slug: 'news' }));
  cms.store.upsertSection('zh', rawSection({ slug: 'news' }));
  cms.store.upsertArticles(Array.from({ length: 6 }, (_, i) => rawArticle({ slug: `story-${i}`, section_slug: 'news' })));
  cms.store.upsertArticle(rawArticle({ locale: 'zh', slug: 'zh-story', section_slug: 'news' }));
});

afterEach(async () => {
  await killWorkers();
  await cms.close();
  dir.cleanup();
});

describe('the sync daemon', () => {
  it('syncs at once, then on every tick, and exits 0 on SIGTERM', async () => {
    const daemon = spawnWorker([], daemonEnv());

    const runs = await waitFor(() => {
      const done = syncRuns(dbPath).filter((r) => r.status === 'succeeded');
      return done.length >= 3 && done;
    }, { timeoutMs: 15_000, what: 'three successful runs' });
    expect(runs.map((r) => r.kind).slice(0, 3)).toEqual(['full', 'incremental', 'incremental']);
    expect(runs.every((r) => r.pid === daemon.pid)).toBe(true);
    // A change in the CMS arrives with the next tick.
    cms.store.upsertArticle(rawArticle({ slug: 'breaking', section_slug: 'news', updated_at: new Date().toISOString() }));
    await waitFor(() => syncRuns(dbPath).some((r) => r.kind === 'incremental' && r.upserted === 1), {
      timeoutMs: 10_000,
      what: 'an incremental run that picked up the change',
    });

    daemon.child.kill('SIGTERM');
    const exit = await daemon.exited;

    expect(exit).toEqual({ code: 0, signal: null });
    expect(daemon.stderr).toBe('');
    // A tick may have started a run just before the signal: it is rolled back, nothing else fails.
    for (const run of syncRuns(dbPath).filter((r) => r.status !== 'succeeded')) {
      expect(run).toMatchObject({ status: 'failed', error: 'stopped before completion; nothing from this run was applied' });
    }
    const messages = parsedLogs(daemon.stdout.split('\n')).map((l) => l.msg);
    expect(messages).toContain('sync worker started; first sync now, then on schedule');
    expect(messages).toContain('stopping: the current run, if any, is rolled back');
  });

  it('skips a tick while a slow run goes on, and on SIGTERM rolls that run back: exit 0, snapshot as before, run failed with a reason', async () => {
    const first = startWorker({ databasePath: dbPath, cmsUrl: cms.url });
    expect((await first.run('full')).status).toBe('succeeded');
    first.close();
    const stamp = new Date(Date.now() + 1_000).toISOString();
    cms.store.upsertArticles(Array.from({ length: 6 }, (_, i) => rawArticle({ slug: `new-${i}`, section_slug: 'news', updated_at: stamp })));
    const before = dumpSnapshot(dbPath);
    // Six requests of half a second each: the run spans several ticks.
    cms.setDelay(500);
    cms.requests.length = 0;

    const daemon = spawnWorker([], daemonEnv({ CMS_PAGE_SIZE: '2' }));
    await daemon.waitForStdout(/skipped a scheduled sync: the previous run is still going/, 15_000);
    const inFlight = syncRuns(dbPath).at(-1)!;
    expect(inFlight).toMatchObject({ kind: 'incremental', status: 'running', pid: daemon.pid });
    expect(cms.requests.length).toBeLessThan(6);

    daemon.child.kill('SIGTERM');
    const exit = await daemon.exited;

    expect(exit).toEqual({ code: 0, signal: null });
    expect(dumpSnapshot(dbPath)).toEqual(before);
    const runs = syncRuns(dbPath);
    expect(runs).toHaveLength(2);
    expect(runs[1]).toMatchObject({
      id: inFlight.id,
      status: 'failed',
      error: 'stopped before completion; nothing from this run was applied',
      finished_at: expect.any(String),
    });
    const logs = parsedLogs(daemon.stdout.split('\n'));
    expect(logs.find((l) => l.msg === 'skipped a scheduled sync: the previous run is still going')).toMatchObject({
      level: 40,
      requested: 'incremental',
      running: 'auto',
    });
    expect(logs.some((l) => l.msg === 'incremental sync failed: stopped before completion; nothing from this run was applied')).toBe(true);
  });
});
