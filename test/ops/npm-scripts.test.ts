import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../fakes/test-cms.js';
import { parsedLogs, REPO_ROOT, syncRuns, waitFor } from '../support/worker.js';
import { isAlive } from '../support/child-output.js';

/*
 * `npm start` and `npm run sync` as an operator's supervisor runs them: a SIGTERM sent to npm
 * must reach the process doing the work. npm signals only its own child, the shell of the
 * script line, which dies without passing the signal on; the API (a whole cluster with
 * WEB_CONCURRENCY) then went on serving with npm gone. The scripts `exec` node, so npm's
 * child is node itself.
 */

const dir = tempDir();
const dbPath = dir.path('snapshot.db');
let cms: TestCms | undefined;
const started: ChildProcess[] = [];
const pidsSeen = new Set<number>();

beforeAll(() => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber' }), { ...rawSection({ slug: 'fiber' }), locale: 'zh' }],
    articles: [rawArticle({ slug: 'hello', section_slug: 'fiber' })],
  });
});

afterEach(async () => {
  // Whatever a failed test left running: npm, and every process that logged its pid.
  for (const child of started.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const pid of pidsSeen) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  pidsSeen.clear();
  await cms?.close();
  cms = undefined;
});
afterAll(() => dir.cleanup());

function npm(args: string[], env: Record<string, string>) {
  const child = spawn('npm', args, {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? dir.path('.'), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let stdout = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.resume();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const logs = () => parsedLogs(stdout.split('\n'));
  return { child, logs, exited };
}

/** Sends SIGTERM to npm only, as a supervisor does, and waits for every pid to be gone. */
async function stopThroughNpm(run: ReturnType<typeof npm>, pids: number[]): Promise<void> {
  for (const pid of pids) pidsSeen.add(pid);
  expect(pids.every(isAlive)).toBe(true);
  run.child.kill('SIGTERM');
  await run.exited;
  await expect.poll(() => pids.filter(isAlive), { timeout: 15_000 }).toEqual([]);
}

describe('the npm scripts under a supervisor', () => {
  it('npm start with WEB_CONCURRENCY=2: SIGTERM to npm stops the primary and both processes', async () => {
    const run = npm(['start'], { DATABASE_PATH: dbPath, HOST: '127.0.0.1', PORT: '0', WEB_CONCURRENCY: '2' });
    const listening = await waitFor(
      () => {
        if (run.child.exitCode !== null) throw new Error(`npm start exited with ${run.child.exitCode}`);
        const lines = run.logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('API listening'));
        return lines.length >= 2 && lines;
      },
      { timeoutMs: 30_000, what: 'two API processes listening' },
    );
    const primary = run.logs().find((l) => l.name === 'api-primary')!.pid as number;
    const workers = listening.map((l) => l.pid as number);
    expect(new Set([primary, ...workers]).size).toBe(3);

    await stopThroughNpm(run, [primary, ...workers]);
    expect(run.logs().filter((l) => l.msg === 'stopped').map((l) => l.pid).sort()).toEqual([primary, ...workers].sort());
  }, 60_000);

  it('npm run sync: SIGTERM to npm stops the worker', async () => {
    cms = await startTestCms();
    cms.store.upsertSection('en', rawSection({ slug: 'news' }));
    cms.store.upsertArticle(rawArticle({ slug: 'story', section_slug: 'news' }));
    const workerDb = dir.path('worker.db');
    const run = npm(['run', 'sync'], {
      DATABASE_PATH: workerDb,
      CMS_BASE_URL: cms.url,
      SYNC_CRON: '0 0 1 1 *',
      SYNC_FULL_CRON: '0 0 1 1 *',
    });
    await waitFor(
      () => {
        if (run.child.exitCode !== null) throw new Error(`npm run sync exited with ${run.child.exitCode}`);
        return syncRuns(workerDb).some((r) => r.status === 'succeeded');
      },
      { timeoutMs: 30_000, what: 'the first sync' },
    );
    const worker = run.logs().find((l) => l.msg === 'sync worker started; first sync now, then on schedule')!.pid as number;

    await stopThroughNpm(run, [worker]);
  }, 60_000);

  it('every long-running script execs node, so npm signals node itself', () => {
    // The two above prove start and sync; demo and keys are the same one-line form.
    const scripts = (JSON.parse(readFileSync(`${REPO_ROOT}package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts;
    for (const name of ['start', 'sync', 'demo', 'keys']) expect(scripts[name], name).toMatch(/^exec node /);
  });
});
