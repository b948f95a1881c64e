import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/run-node.js';
import { killApis, spawnApi } from '../support/api-process.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../fakes/test-cms.js';
import { killWorkers, runWorker, spawnWorker, syncRuns, waitFor, workerEnv } from '../support/worker.js';

/*
 * Every way our processes end, on the runtime the suite runs on (CI: Node 24 and Node 26).
 * better-sqlite3 12 aborted here on Node 24.19+ (`Assertion failed: (env) != nullptr` from a
 * statement's destructor during GC or at exit): such an abort shows as a null exit code with
 * SIGABRT, and as that text on stderr. Each process below is a real child process and each
 * exit is checked for code 0, no signal and no abort text. (A search thread replaced at its
 * time budget is terminated inside the test runner's own process by test/search/sqlite/sqlite-pool
 * and sqlite-admission; an abort there fails that file's fork.)
 */

const dir = tempDir('runtime-exits-');
const dbPath = dir.path('snapshot.db');
const keysPath = dir.path('keys.db');
const ABORT = /Assertion failed|SIGABRT|Aborted|core dumped/;
let cms: TestCms;

const clean = (exit: { code: number | null; signal?: NodeJS.Signals | null }, stderr: string) => {
  expect(exit.code, stderr).toBe(0);
  expect(exit.signal ?? null).toBeNull();
  expect(stderr).not.toMatch(ABORT);
};

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber' }), { ...rawSection({ slug: 'fiber' }), locale: 'zh' }],
    articles: Array.from({ length: 30 }, (_, i) =>
      rawArticle({ slug: `a-${i}`, title: `Fiber laser ${i}`, section_slug: 'fiber', published_at: '2026-01-01T00:00:00Z' }),
    ),
  });
  cms = await startTestCms();
  for (let i = 0; i < 40; i++) cms.store.upsertArticle(rawArticle({ slug: `cms-${i}` }));
});
afterEach(async () => {
  await killApis();
  await killWorkers();
});
afterAll(async () => {
  await cms.close();
  dir.cleanup();
});

// Each test starts several real processes one after another (the keys test a dozen CLI runs):
// about 20 s on CI, so the default 30 s per test is too tight on a loaded machine.
describe(`exit paths on Node ${process.versions.node}`, { timeout: 120_000 }, () => {
  it('the API drains on SIGTERM after serving searches from its threads, and exits 0', async () => {
    const keyOut = await runCli(['create', '--partner', 'Exit', '--create', '--json'], keysPath, { DATABASE_PATH: dbPath });
    const { key } = JSON.parse(keyOut.stdout) as { key: string };
    const api = await spawnApi({ DATABASE_PATH: dbPath, KEYS_DATABASE_PATH: keysPath, SEARCH_WORKERS: '2' });
    // A search before the threads have built their views is refused fast (503 search_busy):
    // wait for the first answer, then each thread has served.
    await waitFor(async () => (await fetch(`${api.url}/api/v1/search?q=fiber`, { headers: { 'X-API-Key': key } })).status === 200, {
      timeoutMs: 20_000,
      intervalMs: 100,
      what: 'a first search answered',
    });
    for (const q of ['laser', 'fib', 'fibre laser']) {
      const res = await fetch(`${api.url}/api/v1/search?q=${encodeURIComponent(q)}`, { headers: { 'X-API-Key': key } });
      expect(res.status).toBe(200);
    }
    api.child.kill('SIGTERM');
    clean(await api.exited, api.stderr);
  });

  it('a WEB_CONCURRENCY cluster stops its children and exits 0 on SIGTERM', async () => {
    const api = await spawnApi({ DATABASE_PATH: dbPath, KEYS_DATABASE_PATH: keysPath, WEB_CONCURRENCY: '2' }, { processes: 2 });
    expect((await fetch(`${api.url}/health`)).status).toBe(200);
    api.child.kill('SIGTERM');
    clean(await api.exited, api.stderr);
  });

  it('the worker exits 0 after --once, and after SIGTERM in the middle of a sync', async () => {
    const path = dir.path('worker.db');
    const env = workerEnv({ DATABASE_PATH: path, KEYS_DATABASE_PATH: keysPath, CMS_BASE_URL: cms.url, CMS_PAGE_SIZE: '2' });
    const once = await runWorker(['--once'], env);
    clean(once, once.stderr);

    cms.setDelay(300);
    const worker = spawnWorker([], env);
    await waitFor(() => syncRuns(path).some((r) => r.status === 'running' && r.pid === worker.pid), {
      timeoutMs: 15_000,
      what: 'a run in progress',
    });
    worker.child.kill('SIGTERM');
    const exit = await worker.exited;
    cms.setDelay(0);
    clean(exit, worker.stderr);
  });

  it('every keys CLI command exits 0', async () => {
    const keys = dir.path('cli-keys.db');
    const env = { DATABASE_PATH: dbPath };
    const run = async (...args: string[]) => {
      const result = await runCli(args, keys, env);
      clean(result, result.stderr);
      return result.stdout;
    };
    await run('init');
    const created = JSON.parse(await run('create', '--partner', 'Acme', '--json')) as { id: number };
    await run('list');
    await run('set-rate', String(created.id), '30');
    await run('rotate', String(created.id));
    await run('backup', dir.path('keys-backup.db'));
    await run('revoke', String(created.id));
    await run('restore', dir.path('keys-backup.db'));
  });
});
