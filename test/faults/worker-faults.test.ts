import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, renameSync, statSync, writeSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { tempDir } from '../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../fakes/test-cms.js';
import { killWorkers, runWorker, workerEnv } from '../support/worker.js';

/*
 * The real worker on a disk that fails it: full or read-only from its very first write (a
 * tmpfs and a read-only bind mount, as root), and a damaged snapshot under a full sync. Every
 * failure is one line on stderr that says what happened and what to do, with exit code 1:
 * no stack, no bare SQLite text.
 */

let cms: TestCms;
let dir: ReturnType<typeof tempDir>;
const mounts: string[] = [];

function mount(args: string[]): boolean {
  try {
    execFileSync('mount', args, { stdio: 'ignore' });
    mounts.push(args[args.length - 1]!);
    return true;
  } catch {
    return false;
  }
}

// Mounting needs root and a kernel that lets this container mount: tried once, each test that
// needs it is skipped with this reason when it cannot.
let canMount = false;
beforeAll(() => {
  const probe = tempDir('mount-probe-');
  canMount = mount(['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe.dir]);
  if (canMount) execFileSync('umount', [mounts.pop()!]);
  probe.cleanup();
});

beforeEach(async () => {
  dir = tempDir('worker-faults-');
  cms = await startTestCms();
  cms.store.upsertSection('en', rawSection({ slug: 'news' }));
  cms.store.upsertArticles(Array.from({ length: 20 }, (_, i) => rawArticle({ slug: `story-${i}`, section_slug: 'news' })));
});

afterEach(async () => {
  await killWorkers();
  await cms.close();
  while (mounts.length > 0) execFileSync('umount', ['-l', mounts.pop()!]);
  dir.cleanup();
});

afterAll(() => {
  while (mounts.length > 0) execFileSync('umount', ['-l', mounts.pop()!]);
});

const env = (databasePath: string) => workerEnv({ DATABASE_PATH: databasePath, CMS_BASE_URL: cms.url, LOG_LEVEL: 'warn' });

/** One line on stderr, exit code 1, no stack, no SQLite text of its own. */
function expectOneLine(result: { code: number | null; stderr: string }, message: RegExp): string {
  expect(result.code, result.stderr).toBe(1);
  const lines = result.stderr.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stderr).not.toMatch(/\.(js|ts):\d+/);
  expect(result.stderr).not.toMatch(/malformed|SqliteError|database or disk is full|attempt to write a readonly/);
  expect(lines[0]).toMatch(message);
  return lines[0]!;
}

/**
 * A reader holding the snapshot open, as the running API does: its -wal and -shm files stay,
 * so opening succeeds even on a full or read-only disk and the run's first write is what fails.
 */
function holdOpen(path: string): Database.Database {
  const reader = new Database(path, { readonly: true });
  reader.prepare('SELECT count(*) FROM articles').get();
  readers.push(reader);
  return reader;
}
const readers: Database.Database[] = [];
afterEach(() => {
  for (const reader of readers.splice(0)) reader.close();
});

async function syncOnce(path: string, ...args: string[]) {
  return runWorker(['--once', ...args], env(path), 60_000);
}

describe('the worker on a disk that fails its first write', { timeout: 120_000 }, () => {
  it('a full disk: one line saying the disk is full, exit 1', async (ctx) => {
    if (!canMount) return ctx.skip('cannot mount a tmpfs here (needs root and a kernel that allows it)');
    const data = dir.path('full');
    mkdirSync(data);
    expect(mount(['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', data])).toBe(true);
    const path = `${data}/snapshot.db`;
    expect((await syncOnce(path)).code).toBe(0);
    holdOpen(path);
    // Fill what is left of the disk.
    const fd = openSync(`${data}/filler`, 'w');
    try {
      for (;;) writeSync(fd, Buffer.alloc(64 * 1024));
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
    } finally {
      closeSync(fd);
    }
    const result = await syncOnce(path);
    expectOneLine(result, /snapshot at .*snapshot\.db cannot be written: the disk is full/);
  });

  it('a read-only data folder: one line naming the problem, exit 1', async (ctx) => {
    if (!canMount) return ctx.skip('cannot bind-mount here (needs root and a kernel that allows it)');
    const data = dir.path('rw');
    mkdirSync(data);
    const path = `${data}/snapshot.db`;
    expect((await syncOnce(path)).code).toBe(0);
    holdOpen(path);
    const readOnly = dir.path('ro');
    mkdirSync(readOnly);
    expect(mount(['--bind', '-o', 'ro', data, readOnly])).toBe(true);
    const result = await syncOnce(`${readOnly}/snapshot.db`);
    expectOneLine(result, /snapshot at .*snapshot\.db cannot be written: its disk is mounted read-only/);
  });
});

describe('a full sync over a damaged snapshot', { timeout: 120_000 }, () => {
  it('stops in one line with the exact commands that rebuild it, and those commands work', async () => {
    const path = dir.path('snapshot.db');
    expect((await syncOnce(path)).code).toBe(0);
    const db = new Database(path, { readonly: true });
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const root = db.prepare(`SELECT rootpage FROM sqlite_master WHERE name = 'articles'`).pluck().get() as number;
    db.close();
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(pageSize, 0xa5), 0, pageSize, (root - 1) * pageSize);
    closeSync(fd);

    const line = expectOneLine(await syncOnce(path, '--full'), /is damaged .* a sync does not repair it in place/);
    expect(line).toContain(`mv ${path} ${path}.damaged; mv ${path}-wal ${path}.damaged-wal; mv ${path}-shm ${path}.damaged-shm`);
    expect(line).toContain('"npm run sync -- --once --full"');

    // What the line says to do, done: the new snapshot is whole.
    for (const suffix of ['', '-wal', '-shm']) if (existsSync(path + suffix)) renameSync(path + suffix, `${path}.damaged${suffix}`);
    expect((await syncOnce(path, '--full')).code).toBe(0);
    const rebuilt = new Database(path, { readonly: true });
    expect(rebuilt.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(rebuilt.prepare('SELECT count(*) FROM articles').pluck().get()).toBe(20);
    rebuilt.close();
    expect(statSync(`${path}.damaged`).size).toBeGreaterThan(0);
  });
});
