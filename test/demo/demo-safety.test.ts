import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createDemoDatabase } from '../../src/demo/demo-files.js';
import { watchChild, type WatchedChild } from '../support/child-output.js';
import { projectRoot } from '../../src/lib/paths.js';
import { tempDir } from '../support/snapshot-fixture.js';

/*
 * What `npm run demo` must never do on a real host: touch the database its shell's
 * DATABASE_PATH names, delete any file it did not create, or stay up after a failed start. The demo is the built entry point,
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

interface Run extends WatchedChild {
  demo: ChildProcess;
}

function runDemo(env: Record<string, string>, cwd: string): Run {
  const demo = spawn(process.execPath, [join(projectRoot(), 'dist/src/demo/main.js')], {
    env: { PATH: process.env.PATH ?? '', ...env },
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  demos.push(demo);
  return { demo, ...watchChild(demo) };
}

async function until(run: Run, text: string): Promise<void> {
  const started = Date.now();
  while (!run.out().includes(text)) {
    if (run.demo.exitCode !== null) throw new Error(`demo exited ${run.demo.exitCode}: ${run.err()}`);
    if (Date.now() - started > 45_000) throw new Error(`no "${text}" in: ${run.out()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Each file's bytes and mtime, or 'missing': equal before and after means untouched. */
function fingerprint(files: string[]): Array<[string, number] | 'missing'> {
  return files.map((file) => (existsSync(file) ? [readFileSync(file).toString('base64'), statSync(file).mtimeMs] : 'missing'));
}

const NOT_OWN =
  'exists and is not a database the demo created, and the demo deletes only its own: set DEMO_DATABASE_PATH to a new file in another folder, or move that file away (a demo database from before the demo stamped its files is one: delete it, with its -wal and -shm files)';

async function takePort(): Promise<number> {
  blocker = createServer();
  await new Promise<void>((resolve) => blocker!.listen(0, '127.0.0.1', resolve));
  return (blocker.address() as { port: number }).port;
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

  it('exits 1 with one line and leaves no process running when the API port is taken during the first sync', async () => {
    const dir = tempDir('demo-safety-');
    dirs.push(dir);
    // Free when the demo checks it at the start, taken before the API binds it after the sync.
    const port = await takePort();
    await new Promise((resolve) => blocker!.close(resolve));
    const run = runDemo({ PORT: String(port), DEMO_DATABASE_PATH: dir.path('demo.db') }, dir.dir);
    await until(run, 'Syncing it into');
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(port, '127.0.0.1', resolve));

    expect(await run.exit(20_000), `stdout: ${run.out()}\nstderr: ${run.err()}`).toBe(1);
    expect(run.err().trim().split('\n')).toEqual([expect.stringContaining(`port ${port} is already in use`)]);
    expect(groupAlive(run.demo)).toBe(false);
    const cmsUrl = /Sample CMS on (http:\S+)/.exec(run.out())?.[1];
    expect(cmsUrl, run.out()).toBeDefined();
    await expect(fetch(`${cmsUrl}/sections?locale=en`)).rejects.toThrow();
  }, 40_000);
});

describe('npm run demo deletes only its own files', () => {
  it('refuses a DEMO_DATABASE_PATH naming a database it did not create: exit 1, one line, the file and its -wal and -shm untouched', async () => {
    const dir = tempDir('demo-safety-');
    dirs.push(dir);
    // A real keys database, as an operator's copy of keys.db would be.
    const keys = new Database(dir.path('keys.db'));
    keys.exec("CREATE TABLE api_keys (id INTEGER PRIMARY KEY, partner TEXT); INSERT INTO api_keys (partner) VALUES ('Acme Media')");
    keys.close();
    writeFileSync(dir.path('keys.db-wal'), 'its write-ahead log\n');
    writeFileSync(dir.path('keys.db-shm'), 'its shared memory\n');
    const files = ['keys.db', 'keys.db-wal', 'keys.db-shm', 'demo-keys.db', 'demo-api.log'].map((name) => dir.path(name));
    const before = fingerprint(files);

    const run = runDemo({ PORT: '0', DEMO_DATABASE_PATH: dir.path('keys.db') }, dir.dir);
    expect(await run.exit(20_000), run.out()).toBe(1);
    expect(run.err().trim().split('\n')).toEqual([`${dir.path('keys.db')} ${NOT_OWN}`]);
    expect(fingerprint(files)).toEqual(before);
    expect(run.out()).not.toContain('Sample CMS');
  }, 30_000);

  it('refuses when the demo-keys.db beside DEMO_DATABASE_PATH is not its own, creating nothing', async () => {
    const dir = tempDir('demo-safety-');
    dirs.push(dir);
    writeFileSync(dir.path('demo-keys.db'), "someone else's file\n");
    const files = ['demo.db', 'demo-keys.db'].map((name) => dir.path(name));
    const before = fingerprint(files);

    const run = runDemo({ PORT: '0', DEMO_DATABASE_PATH: dir.path('demo.db') }, dir.dir);
    expect(await run.exit(20_000), run.out()).toBe(1);
    expect(run.err().trim().split('\n')).toEqual([`${dir.path('demo-keys.db')} ${NOT_OWN}`]);
    expect(fingerprint(files)).toEqual(before);
  }, 30_000);

  it('refuses a DEMO_DATABASE_PATH named demo-keys.db, which would be its snapshot and its keys at once', async () => {
    const dir = tempDir('demo-safety-');
    dirs.push(dir);
    const run = runDemo({ PORT: '0', DEMO_DATABASE_PATH: dir.path('demo-keys.db') }, dir.dir);
    expect(await run.exit(20_000), run.out()).toBe(1);
    expect(run.err().trim().split('\n')).toEqual([expect.stringContaining('DEMO_DATABASE_PATH must not be named demo-keys.db')]);
    expect(existsSync(dir.path('demo-keys.db'))).toBe(false);
  }, 30_000);

  it('finds a taken port before deleting anything, then replaces only its own databases and keeps its earlier log lines', async () => {
    const dir = tempDir('demo-safety-');
    dirs.push(dir);
    // What an earlier run left: the demo's own, stamped databases, and its logs.
    for (const name of ['demo.db', 'demo-keys.db']) {
      createDemoDatabase(dir.path(name));
      const db = new Database(dir.path(name));
      db.exec('CREATE TABLE earlier_run (x)');
      db.close();
    }
    writeFileSync(dir.path('demo-api.log'), 'a line of an earlier run\n');
    const files = ['demo.db', 'demo.db-wal', 'demo.db-shm', 'demo-keys.db', 'demo-api.log'].map((name) => dir.path(name));
    const before = fingerprint(files);
    const env = { DEMO_DATABASE_PATH: dir.path('demo.db') };

    const port = await takePort();
    const refused = runDemo({ ...env, PORT: String(port) }, dir.dir);
    expect(await refused.exit(20_000), refused.out()).toBe(1);
    expect(refused.err().trim().split('\n')).toEqual([`the demo cannot start: port ${port} is already in use (set PORT to a free port)`]);
    expect(refused.out()).not.toContain('Sample CMS');
    expect(fingerprint(files)).toEqual(before);

    const run = runDemo({ ...env, PORT: '0' }, dir.dir);
    await until(run, 'Press Ctrl-C to stop.');
    run.demo.kill('SIGINT');
    expect(await run.exit(30_000)).toBe(0);
    for (const name of ['demo.db', 'demo-keys.db']) {
      const db = new Database(dir.path(name), { readonly: true });
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
      db.close();
      expect(tables).not.toContain('earlier_run');
      expect(tables.length).toBeGreaterThan(1);
    }
    const log = readFileSync(dir.path('demo-api.log'), 'utf8');
    expect(log.startsWith('a line of an earlier run\n')).toBe(true);
    expect(log).toContain('API listening');
  }, 60_000);

});
