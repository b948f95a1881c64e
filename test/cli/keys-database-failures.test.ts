import Database from 'better-sqlite3';
import { openSync, writeSync, closeSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/snapshot-fixture.js';
import { cliJson, expectOneLineFailure, readRows, type CreatedJson } from '../support/keys-helpers.js';
import { runCli } from '../support/run-node.js';

/*
 * The keys database failing under a command that opened it fine: locked by another writer
 * past the busy timeout, or damaged. Tests may run as root, where a read-only file is still
 * writable, so the failures are real locks and real damage. Every command answers as its
 * header promises: one line on stderr naming what to do, no SQL, no stack, exit code 1.
 */

const dirs: { cleanup: () => void }[] = [];
afterAll(() => dirs.forEach((d) => d.cleanup()));

/** A migrated keys database holding keys for two partners, and its path. */
async function keysDatabase(): Promise<{ path: string; ids: number[] }> {
  const dir = tempDir('keys-db-failures-');
  dirs.push(dir);
  const path = dir.path('keys.db');
  const ids: number[] = [];
  for (const partner of ['Acme Media', 'Globex']) {
    ids.push((await cliJson<CreatedJson>(['create', '--partner', partner, '--create'], path)).id);
  }
  return { path, ids };
}

/** SQLite's own words and our SQL never reach the editor. */
function expectNoSql(line: string): void {
  expect(line).not.toMatch(/\b(SELECT|INSERT|UPDATE|DELETE|BEGIN|PRAGMA|api_keys)\b/i);
  expect(line).not.toMatch(/SqliteError|database is locked/);
}

/** Runs `fn` while another connection holds the write lock, as a slow restore or another editor would. */
async function whileWriteLocked<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const other = new Database(path);
  try {
    other.exec('BEGIN IMMEDIATE');
    return await fn();
  } finally {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
  }
}

describe('keys commands over a keys database locked past DATABASE_BUSY_TIMEOUT_MS', () => {
  const commands: Array<[string, (ids: number[]) => string[]]> = [
    ['create', () => ['create', '--partner', 'Initech']],
    ['revoke', (ids) => ['revoke', String(ids[0])]],
    ['rotate', (ids) => ['rotate', String(ids[0])]],
    ['set-rate', (ids) => ['set-rate', String(ids[0]), '600']],
  ];

  for (const [name, args] of commands) {
    it(`${name} fails with one line saying the database stayed locked, exit 1, no stack, and changes nothing`, async () => {
      const { path, ids } = await keysDatabase();
      const before = readRows(path);
      const result = await whileWriteLocked(path, () => runCli(args(ids), path, { DATABASE_BUSY_TIMEOUT_MS: '200' }));
      const line = expectOneLineFailure(result);
      expect(line).toContain(path);
      expect(line).toMatch(/locked/);
      expect(line).toContain('DATABASE_BUSY_TIMEOUT_MS (200 ms)');
      expectNoSql(line);
      expect(readRows(path)).toEqual(before);
    });
  }
});

describe('keys commands over a damaged keys database', () => {
  it('list fails with one line saying the database is damaged and to restore it, exit 1, no stack', async () => {
    const { path } = await keysDatabase();
    damageKeysTable(path);
    const line = expectOneLineFailure(await runCli(['list'], path));
    expect(line).toContain(path);
    expect(line).toMatch(/damaged.*restore/);
    expectNoSql(line);
  });

  it('any command on a file that is not a database at all says it is damaged and to restore it', async () => {
    const { path } = await keysDatabase();
    const fd = openSync(path, 'w');
    writeSync(fd, Buffer.alloc(8192, 'not a database '));
    closeSync(fd);
    for (const args of [['list'], ['revoke', '1']]) {
      const line = expectOneLineFailure(await runCli(args, path));
      expect(line, args.join(' ')).toMatch(/damaged.*restore/);
      expectNoSql(line);
    }
  });

  it('list --json fails the same way: scripts get exit 1 and nothing on stdout', async () => {
    const { path } = await keysDatabase();
    damageKeysTable(path);
    expect(expectOneLineFailure(await runCli(['list', '--json'], path))).toMatch(/damaged/);
  });
});

/**
 * Overwrites the api_keys table's root page with garbage, leaving the schema page intact, so
 * the database opens and only reading the keys fails (as a bad disk sector would do).
 */
function damageKeysTable(path: string): void {
  const db = new Database(path);
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const rootPage = db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'api_keys'").pluck().get() as number;
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  expect(rootPage).toBeGreaterThan(1);
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, Buffer.alloc(pageSize, 0xa5), 0, pageSize, (rootPage - 1) * pageSize);
  } finally {
    closeSync(fd);
  }
}

/** A backup of the keys database at `path`, made by the CLI, in a folder of its own. */
async function backedUp(path: string): Promise<{ backup: string; dir: ReturnType<typeof tempDir> }> {
  const dir = tempDir('keys-restore-');
  dirs.push(dir);
  const backup = dir.path('keys-backup.db');
  expect((await runCli(['backup', backup], path)).code).toBe(0);
  return { backup, dir };
}

// Several CLI runs per test, each a Node process start: generous on a loaded machine.
describe('keys restore', { timeout: 90_000 }, () => {
  it('fails with one line, exit 1, when the keys database stays locked during the restore, and reports no success', async () => {
    const { path } = await keysDatabase();
    const { backup } = await backedUp(path);
    // Changed after the backup: a restore that went through would bring the old rows back.
    await cliJson<CreatedJson>(['create', '--partner', 'Initech'], path);
    const before = readRows(path);
    const result = await whileWriteLocked(path, () => runCli(['restore', backup], path, { DATABASE_BUSY_TIMEOUT_MS: '200' }));
    const line = expectOneLineFailure(result);
    expect(line).toMatch(/locked.*nothing was restored.*retry/);
    expect(result.stdout).not.toMatch(/Restored/);
    expect(readRows(path)).toEqual(before);
  });

  it('refuses to restore over a file that is another database (the snapshot), and leaves it as it was', async () => {
    const { path } = await keysDatabase();
    const { backup, dir } = await backedUp(path);
    const snapshot = dir.path('snapshot.db');
    const other = new Database(snapshot);
    other.exec('CREATE TABLE articles (id INTEGER PRIMARY KEY, slug TEXT); INSERT INTO articles (slug) VALUES (\'kept\')');
    other.close();
    const line = expectOneLineFailure(await runCli(['restore', backup], snapshot));
    // The target is what is wrong here, not the backup file.
    expect(line).toContain(`the file at KEYS_DATABASE_PATH (${snapshot}) is not a keys database`);
    expect(line).toContain('is KEYS_DATABASE_PATH pointing at the snapshot?');
    expect(line).not.toContain('backup file');
    const after = new Database(snapshot, { readonly: true });
    expect(after.prepare('SELECT slug FROM articles').pluck().all()).toEqual(['kept']);
    after.close();
  });
});

