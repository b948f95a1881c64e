import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { tempDir } from '../support/snapshot-fixture.js';

/*
 * What `npm run demo` must never do on a real host: touch the database its shell's
 * DATABASE_PATH names, or stay up after a failed start. The demo is the built entry point,
 * started in its own process group so that the test can tell whether any of its children
 * outlived it.
 */

const dirs: Array<ReturnType<typeof tempDir>> = [];
const demos: ChildProcess[] = [];
let blocker: Server | undefined;

afterEach(async () => {
  for (const demo of demos.splice(0)) {
    // The whole group, so that a failing test leaves neither the demo nor its children running.
    try {
      process.kill(-demo.pid!, 'SIGKILL');
    } catch {
      // Nothing left in the group.
    }
  }
  await new Promise((resolve) => (blocker ? blocker.close(resolve) : resolve(undefined)));
  blocker = undefined;
  for (const dir of dirs.splice(0)) dir.cleanup();
});

interface Run {
  demo: ChildProcess;
  out: () => string;
  err: () => string;
  /** The exit code, or 'still running' if the demo has not exited within the time given. */
  exit: (withinMs: number) => Promise<number | null | 'still running'>;
}

function runDemo(env: Record<string, string>, cwd: string): Run {
  const demo = spawn(process.execPath, [join(projectRoot(), 'dist/src/demo/main.js')], {
    env: { PATH: process.env.PATH ?? '', ...env },
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  demos.push(demo);
  let out = '';
  let err = '';
  demo.stdout!.on('data', (d: Buffer) => (out += d));
  demo.stderr!.on('data', (d: Buffer) => (err += d));
  const exited = new Promise<number | null>((resolve) => demo.once('exit', (code) => resolve(code)));
  return {
    demo,
    out: () => out,
    err: () => err,
    exit: (withinMs) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), withinMs)));
      return Promise.race([exited, late]).finally(() => clearTimeout(timer));
    },
  };
}

async function until(run: Run, text: string): Promise<void> {
  const started = Date.now();
  while (!run.out().includes(text)) {
    if (run.demo.exitCode !== null) throw new Error(`demo exited ${run.demo.exitCode}: ${run.err()}`);
    if (Date.now() - started > 45_000) throw new Error(`no "${text}" in: ${run.out()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether any process of the demo's group (the demo or a child it started) still runs. */
function groupAlive(demo: ChildProcess): boolean {
  try {
    process.kill(-demo.pid!, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

describe('npm run demo on a host with a real service', () => {
  it('leaves the database files DATABASE_PATH and KEYS_DATABASE_PATH name untouched, and says it ignores them', async () => {
    const dir = tempDir('demo-safety-');
    dirs.push(dir);
    const live = join(dir.dir, 'live');
    mkdirSync(live);
    const files = ['snapshot.db', 'snapshot.db-wal', 'snapshot.db-shm', 'keys.db'].map((name) => join(live, name));
    for (const file of files) writeFileSync(file, `the live ${file}\n`);
    const before = files.map((file) => [readFileSync(file, 'utf8'), statSync(file).mtimeMs]);

    // Run from the temporary folder: the demo's own default data/demo.db lands there, not in
    // the repository.
    const run = runDemo(
      { PORT: '0', DATABASE_PATH: join(live, 'snapshot.db'), KEYS_DATABASE_PATH: join(live, 'keys.db') },
      dir.dir,
    );
    await until(run, 'Press Ctrl-C to stop.');
    run.demo.kill('SIGINT');
    expect(await run.exit(30_000)).toBe(0);

    expect(files.map((file) => (existsSync(file) ? [readFileSync(file, 'utf8'), statSync(file).mtimeMs] : 'deleted'))).toEqual(before);
    expect(run.out().split('\n')[0]).toMatch(/^Ignoring DATABASE_PATH and KEYS_DATABASE_PATH: the demo uses only its own /);
    expect(existsSync(join(dir.dir, 'data', 'demo.db'))).toBe(true);
    expect(existsSync(join(dir.dir, 'data', 'demo-keys.db'))).toBe(true);
  }, 60_000);

  it('exits 1 with one line and leaves no process running when the API port is taken', async () => {
    const dir = tempDir('demo-safety-');
    dirs.push(dir);
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;

    const run = runDemo({ PORT: String(port), DEMO_DATABASE_PATH: dir.path('demo.db') }, dir.dir);
    // The first sync and the key come first: a few seconds, then the API fails at once.
    expect(await run.exit(20_000), `stdout: ${run.out()}\nstderr: ${run.err()}`).toBe(1);
    expect(run.err().trim().split('\n')).toEqual([expect.stringContaining(`port ${port} is already in use`)]);
    expect(groupAlive(run.demo)).toBe(false);
    const cmsUrl = /Sample CMS on (http:\S+)/.exec(run.out())?.[1];
    expect(cmsUrl, run.out()).toBeDefined();
    await expect(fetch(`${cmsUrl}/sections?locale=en`)).rejects.toThrow();
  }, 40_000);
});
