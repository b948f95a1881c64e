import Database from 'better-sqlite3';
import { existsSync, readFileSync } from 'node:fs';
import { openKeysWriter } from '../../src/db/keys/keys-connection.js';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { NotASnapshotError, openReader, openWriter, SchemaOutdatedError, SnapshotMissingError } from '../../src/db/sqlite/connection.js';
import { migrate, migrations } from '../../src/db/sqlite/migrate.js';
import { CONNECTION_MODULE_PATH, runNode } from '../support/run-node.js';
import { tempDir } from '../support/snapshot-fixture.js';

const journal = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../src/db/snapshot/migrations/meta/_journal.json', import.meta.url)), 'utf8'),
) as { entries: { tag: string; when: number }[] };

const TABLES = ['sections', 'articles', 'api_keys', 'snapshot_state', 'sync_runs', 'articles_fts'];
const OPTIONS = { busyTimeoutMs: 5_000 };

const dirs: { cleanup: () => void }[] = [];
afterAll(() => dirs.forEach((d) => d.cleanup()));
function freshDir() {
  const dir = tempDir('migrate-test-');
  dirs.push(dir);
  return dir;
}

interface MigrationRow {
  id: number;
  hash: string;
  created_at: number;
}

/** Reads a database with a plain connection of its own, outside the code under test. */
function inspect<T>(path: string, read: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

const tableNames = (db: Database.Database) =>
  (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map((r) => r.name);
const migrationRows = (db: Database.Database) =>
  db.prepare('SELECT id, hash, created_at FROM __drizzle_migrations ORDER BY id').all() as MigrationRow[];

describe('openWriter', () => {
  it('creates the file and its folders, applies every migration and switches to WAL', () => {
    const dir = freshDir();
    const path = dir.path('a/b/c/snapshot.db');
    expect(existsSync(path)).toBe(false);

    const db = openWriter(path, OPTIONS);
    try {
      expect(db.$client.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.$client.pragma('busy_timeout', { simple: true })).toBe(5_000);
    } finally {
      db.$client.close();
    }

    expect(existsSync(path)).toBe(true);
    inspect(path, (sqlite) => {
      expect(tableNames(sqlite)).toEqual(expect.arrayContaining([...TABLES, '__drizzle_migrations']));
      // WAL is a property of the file: a new connection sees it too.
      expect(sqlite.pragma('journal_mode', { simple: true })).toBe('wal');
      const rows = migrationRows(sqlite);
      expect(journal.entries.length).toBeGreaterThan(0);
      expect(rows).toHaveLength(journal.entries.length);
      expect(rows.map((r) => Number(r.created_at))).toEqual(journal.entries.map((e) => e.when));
      expect(rows.map((r) => r.hash)).toEqual(migrations().map((m) => m.hash));
    });
  });

  it('applies nothing when opened again, and keeps the rows already there', () => {
    const dir = freshDir();
    const path = dir.path('snapshot.db');
    const first = openWriter(path, OPTIONS);
    first.$client
      .prepare('INSERT INTO api_keys (partner, prefix, hash, created_at) VALUES (?, ?, ?, ?)')
      .run('Acme Media', 'lsk_abcd', 'a'.repeat(64), '2026-11-01T12:00:00Z');
    first.$client.close();
    const before = inspect(path, (sqlite) => ({
      migrations: migrationRows(sqlite),
      keys: sqlite.prepare('SELECT * FROM api_keys').all(),
      schema: sqlite.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name').all(),
    }));

    const second = openWriter(path, OPTIONS);
    try {
      expect(migrate(second.$client)).toBe(0);
    } finally {
      second.$client.close();
    }

    const after = inspect(path, (sqlite) => ({
      migrations: migrationRows(sqlite),
      keys: sqlite.prepare('SELECT * FROM api_keys').all(),
      schema: sqlite.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name').all(),
    }));
    expect(after).toEqual(before);
    expect(after.keys).toHaveLength(1);
  });

  it('applies the missing migrations to an older database', () => {
    const dir = freshDir();
    const path = dir.path('old.db');
    writeOldSchema(path);

    openWriter(path, OPTIONS).$client.close();

    inspect(path, (sqlite) => {
      expect(migrationRows(sqlite)).toHaveLength(journal.entries.length);
      expect(tableNames(sqlite)).toEqual(expect.arrayContaining(TABLES));
    });
  });

  it('refuses the keys database or any database with tables that is not a snapshot, before writing to it', () => {
    const dir = freshDir();
    const keysPath = dir.path('keys.db');
    openKeysWriter(keysPath, { ...OPTIONS, create: true }).db.$client.close();
    const otherPath = dir.path('other.db');
    const other = new Database(otherPath);
    other.exec('CREATE TABLE unrelated (x)');
    other.close();

    for (const path of [keysPath, otherPath]) {
      const before = readFileSync(path);
      expect(() => openWriter(path, OPTIONS)).toThrow(NotASnapshotError);
      expect(readFileSync(path).equals(before)).toBe(true);
    }
  });

  it('with create: false, refuses a missing file and creates neither it nor its folder', () => {
    const dir = freshDir();
    const path = dir.path('missing/snapshot.db');
    expect(() => openWriter(path, { ...OPTIONS, create: false })).toThrow(SnapshotMissingError);
    expect(existsSync(dir.path('missing'))).toBe(false);

    openWriter(dir.path('snapshot.db'), OPTIONS).$client.close();
    openWriter(dir.path('snapshot.db'), { ...OPTIONS, create: false }).$client.close();
  });

  it('lets two processes open the same new file at the same moment: both succeed, migrations recorded once', async () => {
    // A few rounds, each on a new file: the race only shows when the two starts overlap.
    for (let round = 0; round < 3; round += 1) {
      const dir = freshDir();
      const path = dir.path(`race-${round}/snapshot.db`);
      // Both children wait for the same instant before opening, to start as close together as possible.
      const startAt = Date.now() + 1_000;
      const script = [
        `import { openWriter } from ${JSON.stringify(CONNECTION_MODULE_PATH)};`,
        `while (Date.now() < ${startAt}) {}`,
        `const db = openWriter(${JSON.stringify(path)}, { busyTimeoutMs: 10000 });`,
        `db.$client.close();`,
        `process.stdout.write('opened');`,
      ].join('\n');
      const results = await Promise.all(
        [0, 1].map(() => runNode(['--input-type=module', '-e', script], {}, { timeoutMs: 20_000 })),
      );
      for (const result of results) {
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
        expect(result.stdout).toBe('opened');
      }
      inspect(path, (sqlite) => {
        expect(migrationRows(sqlite)).toHaveLength(journal.entries.length);
        expect(tableNames(sqlite)).toEqual(expect.arrayContaining(TABLES));
      });
    }
  });
});

describe('the partner ordering index', () => {
  it('covers what the visibility index reads (exposureOrdering), so its build never reads an article row', () => {
    const dir = freshDir();
    const path = dir.path('snapshot.db');
    openWriter(path, OPTIONS).$client.close();
    inspect(path, (sqlite) => {
      // The columns and order of exposureOrdering (src/db/snapshot/content.ts), without its join.
      const plan = (sqlite.prepare(
        `EXPLAIN QUERY PLAN SELECT a.id, a.published_at, a.section_slug, a.updated_at FROM articles a
         WHERE a.locale = ? AND a.status = 'published' AND a.published_at IS NOT NULL ORDER BY a.published_at DESC, a.slug ASC`,
      ).all('en') as { detail: string }[]).map((row) => row.detail);
      expect(plan).toEqual([expect.stringContaining('USING COVERING INDEX articles_exposure')]);
    });
  });
});

describe('openReader', () => {
  it('throws on a missing file and never creates it (nor its folder)', () => {
    const dir = freshDir();
    const path = dir.path('missing/snapshot.db');
    expect(() => openReader(path, OPTIONS)).toThrow();
    expect(existsSync(path)).toBe(false);
    expect(existsSync(dir.path('missing'))).toBe(false);

    const inExistingFolder = dir.path('snapshot.db');
    expect(() => openReader(inExistingFolder, OPTIONS)).toThrow();
    expect(existsSync(inExistingFolder)).toBe(false);
  });

  it('throws SchemaOutdatedError on a database with an older schema', () => {
    const dir = freshDir();
    const path = dir.path('old.db');
    writeOldSchema(path);
    expect(() => openReader(path, OPTIONS)).toThrow(SchemaOutdatedError);
    // And it did not migrate it.
    inspect(path, (sqlite) => expect(migrationRows(sqlite)).toHaveLength(journal.entries.length - 1));
  });

  it('throws SchemaOutdatedError on a SQLite file with no schema at all', () => {
    const dir = freshDir();
    const path = dir.path('empty.db');
    const sqlite = new Database(path);
    sqlite.exec('CREATE TABLE unrelated (x)');
    sqlite.close();
    expect(() => openReader(path, OPTIONS)).toThrow(SchemaOutdatedError);
  });

  it('opens an up-to-date database read-only: reads work, a write throws', () => {
    const dir = freshDir();
    const path = dir.path('snapshot.db');
    openWriter(path, OPTIONS).$client.close();

    const db = openReader(path, OPTIONS);
    try {
      expect(db.$client.readonly).toBe(true);
      expect(db.$client.prepare('SELECT count(*) AS n FROM api_keys').get()).toEqual({ n: 0 });
      let failure: unknown;
      try {
        db.$client
          .prepare('INSERT INTO api_keys (partner, prefix, hash, created_at) VALUES (?, ?, ?, ?)')
          .run('Acme Media', 'lsk_abcd', 'b'.repeat(64), '2026-11-01T12:00:00Z');
      } catch (error) {
        failure = error;
      }
      expect((failure as { code?: string } | undefined)?.code).toMatch(/^SQLITE_READONLY/);
    } finally {
      db.$client.close();
    }
    inspect(path, (sqlite) => expect(sqlite.prepare('SELECT count(*) AS n FROM api_keys').get()).toEqual({ n: 0 }));
  });
});

/** A database migrated up to, but not including, the newest migration (as an older release left it). */
function writeOldSchema(path: string): void {
  const all = migrations();
  expect(all.length).toBeGreaterThan(1);
  const sqlite = new Database(path);
  try {
    sqlite.exec('CREATE TABLE __drizzle_migrations (id INTEGER PRIMARY KEY, hash TEXT NOT NULL, created_at NUMERIC)');
    for (const migration of all.slice(0, -1)) {
      for (const statement of migration.sql) if (statement.trim()) sqlite.exec(statement);
      sqlite.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run(migration.hash, migration.folderMillis);
    }
  } finally {
    sqlite.close();
  }
}
