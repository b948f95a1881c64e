import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openWriter } from '../../../src/db/sqlite/connection.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import { killWorkers, runWorker, startWorker, syncRuns, workerEnv, type TestWorker } from '../../support/worker.js';

const T0 = '2026-11-01T12:00:00Z';

let dir: ReturnType<typeof tempDir>;
let dbPath: string;
let cms: TestCms;
let worker: TestWorker;
let now: number;
// Each reading of the clock is one second later: started_at and finished_at differ.
const clock = () => {
  now += 1_000;
  return now;
};

const articles = Array.from({ length: 12 }, (_, i) => rawArticle({ slug: `story-${i}`, section_slug: 'news' }));

beforeEach(async () => {
  dir = tempDir();
  dbPath = dir.path('snapshot.db');
  cms = await startTestCms();
  cms.store.upsertSection('en', rawSection({ slug: 'news' }));
  cms.store.upsertArticles(articles);
  cms.store.upsertArticle(rawArticle({ locale: 'zh', slug: 'zh-story', section_slug: null }));
  now = Date.parse(T0) - 1_000;
  worker = startWorker({ databasePath: dbPath, cmsUrl: cms.url, clock });
});

afterEach(async () => {
  cms.onPage(undefined);
  await killWorkers();
  worker.close();
  await cms.close();
  dir.cleanup();
});

describe('sync_runs', () => {
  it('records kind, times, status, counts and no error for a successful run', async () => {
    const summary = await worker.run('full');

    const [run] = syncRuns(dbPath);
    expect(run).toEqual({
      id: summary.runId,
      kind: 'full',
      status: 'succeeded',
      started_at: T0,
      finished_at: expect.stringMatching(/^2026-11-01T12:00:0\dZ$/),
      fetched: 13,
      upserted: 13,
      removed: 0,
      rejected: 0,
      error: null,
      pid: process.pid,
      host: hostname(),
    });
    expect(run!.finished_at! > run!.started_at).toBe(true);
  });

  it('shows a run as running, without a finish time, while it is going', async () => {
    let during: unknown;
    cms.onPage(() => {
      during ??= syncRuns(dbPath).at(-1);
    });

    await worker.run('full');

    expect(during).toMatchObject({ kind: 'full', status: 'running', finished_at: null, error: null });
    expect(syncRuns(dbPath).at(-1)).toMatchObject({ status: 'succeeded' });
  });

  it('records counts of removals and rejections, and the error of a failed run on one line', async () => {
    await worker.run('full');
    cms.store.removeArticle(articles[0]!.id);
    cms.badRecordNext({ url: 'not a url' }, 1);
    const second = await worker.run('full');
    cms.failNext(1, { status: 404, body: '{"error":{"message":"no such export\\nsecond line"}}' });
    const third = await worker.run('incremental');

    const runs = syncRuns(dbPath);
    // fetched: every record received (11 en, the rejected one included, and 1 zh).
    expect(runs.slice(1).map(({ pid: _pid, host: _host, started_at: _s, finished_at: _f, ...rest }) => rest)).toEqual([
      { id: second.runId, kind: 'full', status: 'succeeded', fetched: 12, upserted: 0, removed: 1, rejected: 1, error: null },
      {
        id: third.runId,
        kind: 'incremental',
        status: 'failed',
        fetched: 0,
        upserted: 0,
        removed: 0,
        rejected: 0,
        error: 'CMS error response: GET /sections?locale=en: HTTP 404 Not Found: no such export second line',
      },
    ]);
    expect(runs.every((r) => r.finished_at !== null && r.finished_at > r.started_at)).toBe(true);
  });

  it('marks a run left running by a process that died as failed and interrupted, at the next run', async () => {
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const writer = openWriter(dbPath, { busyTimeoutMs: 5_000 });
    const insert = writer.$client.prepare(`INSERT INTO sync_runs (kind, status, started_at, pid, host) VALUES (?, 'running', ?, ?, ?)`);
    insert.run('full', '2026-11-01T11:00:00Z', dead, hostname());
    // A live worker's run, and a run of another machine, whose liveness cannot be checked here.
    insert.run('incremental', '2026-11-01T11:30:00Z', process.ppid, hostname());
    insert.run('full', '2026-11-01T11:40:00Z', dead, 'another-host');
    writer.$client.close();

    expect((await worker.run('full')).status).toBe('succeeded');

    const [killed, live, remote, next] = syncRuns(dbPath);
    expect(killed).toMatchObject({
      status: 'failed',
      finished_at: T0,
      error: 'interrupted: the worker stopped before the run finished',
    });
    expect(live).toMatchObject({ status: 'running', finished_at: null, error: null });
    expect(remote).toMatchObject({ status: 'running', finished_at: null });
    expect(next).toMatchObject({ status: 'succeeded' });
  });

  it('marks a run left running by an earlier process that had this same pid (a restarted container) as interrupted', async () => {
    const writer = openWriter(dbPath, { busyTimeoutMs: 5_000 });
    writer.$client
      .prepare(`INSERT INTO sync_runs (kind, status, started_at, pid, host) VALUES ('full', 'running', ?, ?, ?)`)
      .run('2026-11-01T11:00:00Z', process.pid, hostname());
    writer.$client.close();

    expect((await worker.run('full')).status).toBe('succeeded');

    expect(syncRuns(dbPath)[0]).toMatchObject({ status: 'failed', error: 'interrupted: the worker stopped before the run finished' });
  });

  it('--status --json prints every run, newest first, with kind, times, status, counts and error', async () => {
    await worker.run('full');
    cms.failNext(1, { status: 404 });
    await worker.run('incremental');
    worker.close();

    const result = await runWorker(['--status', '--json'], workerEnv({ DATABASE_PATH: dbPath }));

    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const printed = JSON.parse(result.stdout) as unknown[];
    const stored = syncRuns(dbPath).reverse();
    expect(printed).toEqual(stored.map(({ pid: _pid, host: _host, ...rest }) => rest));
    expect(printed).toMatchObject([
      { kind: 'incremental', status: 'failed', error: expect.stringMatching(/^CMS error response: .*HTTP 404/) },
      { kind: 'full', status: 'succeeded', started_at: T0, fetched: 13, upserted: 13, removed: 0, rejected: 0, error: null },
    ]);
  });

  it('--status prints a table for people, and says so when nothing has run yet', async () => {
    worker.close();
    const empty = await runWorker(['--status'], workerEnv({ DATABASE_PATH: dbPath }));
    expect(empty).toMatchObject({ code: 0, stderr: '' });
    expect(empty.stdout).toMatch(/^No sync has run yet/);

    worker = startWorker({ databasePath: dbPath, cmsUrl: cms.url, clock });
    await worker.run('full');
    worker.close();
    const table = await runWorker(['--status'], workerEnv({ DATABASE_PATH: dbPath }));
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +KIND +STATUS +STARTED +FINISHED +FETCHED +UPSERTED +REMOVED +REJECTED +ERROR$/);
    expect(lines[1]).toMatch(new RegExp(`^1 +full +succeeded +${T0} +2026-11-01T12:00:0\\dZ +13 +13 +0 +0$`));
  });
});
