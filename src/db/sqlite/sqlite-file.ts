import Database from 'better-sqlite3';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { appliedSchemaVersion, expectedSchemaVersion, migrate, migrations } from './migrate.js';
import type * as schema from '../snapshot/schema.js';
import { WAL_SIZE_LIMIT_BYTES } from './wal.js';

/*
 * Opening the snapshot's SQLite file, and what every query module needs, without drizzle-orm at
 * run time: the API's search threads need none of it (they run prepared statements only), and
 * even loaded through require (drizzle.ts) it costs each V8 isolate about 0.1 s and 10 MB.
 * connection.ts wraps the connections in drizzle for the API's main thread, the worker and the CLI.
 */

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

export interface OpenOptions {
  busyTimeoutMs: number;
}

export interface WriterOptions extends OpenOptions {
  /**
   * Whether a missing file may be created (default: yes, a sync creates its snapshot). False
   * for commands that only read or rebuild an existing snapshot (`--status`, `--reindex`): a
   * mistyped DATABASE_PATH must not leave an empty snapshot behind that looks like "no sync yet".
   */
  create?: boolean;
  /**
   * Whether a snapshot written by a newer version may be opened (default: no). Only for
   * commands that write nothing (`--status`): a sync or a reindex by this version would write
   * past what the newer version keeps beside the content (its change feed, say).
   */
  allowNewer?: boolean;
}

/**
 * Opens the snapshot for a writer (the worker): creates the file and its folder when missing
 * and allowed, refuses a file that is not a snapshot before writing anything to it, switches
 * to WAL so readers never wait for a sync, and applies migrations.
 */
export function openWriterFile(path: string, options: WriterOptions): Database.Database {
  const created = !existsSync(path);
  if (created && options.create === false) {
    throw new SnapshotMissingError(`no snapshot at DATABASE_PATH ${path}: run a sync first ("npm run sync -- --once"), or check DATABASE_PATH`);
  }
  if (created) ensureFolder(dirname(path));
  const sqlite = new Database(path, { fileMustExist: !created });
  try {
    // The busy timeout first: the WAL switch and the migrations may wait for another writer.
    sqlite.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs)}`);
    // Before the WAL switch, which already writes to the file.
    assertSnapshot(sqlite);
    if (!options.allowNewer) assertNotNewer(sqlite);
    useWal(sqlite, options.busyTimeoutMs);
    sqlite.pragma('synchronous = NORMAL');
    // Without it the WAL keeps the size of the largest sync ever written (see db/wal.ts).
    sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    migrate(sqlite);
  } catch (error) {
    sqlite.close();
    throw error;
  }
  return sqlite;
}

/**
 * Refuses a snapshot whose schema is newer than this code's (a migration dated after the newest
 * this version has). Such a snapshot was written by a newer version, which may keep things
 * beside the content that this version does not know to write: a sync by this version would
 * change articles without them (the change feed's rows, for instance), and partners would
 * never hear of those changes. The API still reads such a snapshot (assertSnapshot lets it
 * through), so a rollback of the API, or an upgrade whose worker goes first, serves as before.
 * Dated, not hashed: a migration file reformatted later must not make a snapshot look foreign.
 */
export function assertNotNewer(sqlite: Database.Database): void {
  if (appliedSchemaVersion(sqlite) > expectedSchemaVersion()) {
    throw new SnapshotNewerError(
      'was written by a newer version (schema migrations this worker does not know) and was left unchanged: a sync by this version would bypass that version\'s change feed; run the newer worker, or point this one at a new DATABASE_PATH for a full sync',
    );
  }
}

/** The snapshot's schema is newer than this code's: a writer refuses it (see assertNotNewer). */
export class SnapshotNewerError extends Error {
  override name = 'SnapshotNewerError';
}

/** There is no snapshot at the path, and the command was not allowed to create one. */
export class SnapshotMissingError extends Error {
  override name = 'SnapshotMissingError';
}

/**
 * Refuses a file that is not a snapshot, so that DATABASE_PATH pointing at the keys database
 * (or anything else) fails with a message instead of being migrated into a hybrid that
 * neither the keys CLI nor the API can use. A snapshot has snapshot migrations applied (an
 * older one fewer of them, a newer one more); a new one has no tables at all. Used by the
 * worker (before writing) and the API (before reading).
 */
export function assertSnapshot(sqlite: Database.Database): void {
  const tables = sqlite.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all() as string[];
  if (tables.length === 0) return;
  const known = new Set(migrations().map((m) => m.hash));
  const applied = tables.includes('__drizzle_migrations')
    ? (sqlite.prepare('SELECT hash FROM __drizzle_migrations').pluck().all() as string[])
    : [];
  // Migrations this version does not know as well as ones it does: a newer version's snapshot
  // (a rolling upgrade whose worker went first, or a rollback), which is read and written as
  // before. None it knows: another database altogether.
  if (!applied.some((hash) => known.has(hash))) {
    // No path here: the API shows this reason on /health, which needs no key; the worker's
    // one line names the path (sync/snapshot-failure.ts).
    throw new NotASnapshotError(
      'is not a snapshot this version knows (the keys database?); it was left unchanged: point DATABASE_PATH at the snapshot, or at a new file for a first sync',
    );
  }
}

/**
 * Switches a new database to WAL (a no-op once it is). Two writers opening a new file at the
 * same moment can deadlock on that switch, and SQLite then answers SQLITE_BUSY at once
 * instead of waiting out the busy timeout: retry within that timeout ourselves.
 */
export function useWal(sqlite: Database.Database, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      sqlite.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw error;
      // A short synchronous pause: opening a database is synchronous all the way through.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10 + Math.random() * 40);
    }
  }
}

/**
 * Creates a folder and its missing parents one level at a time. Node's recursive mkdir loops
 * forever on some paths (under /proc it keeps getting ENOENT and retrying the parent), which
 * would hang the CLI instead of failing with a message.
 */
export function ensureFolder(folder: string): void {
  if (existsSync(folder)) return;
  const parent = dirname(folder);
  if (parent !== folder) ensureFolder(parent);
  try {
    mkdirSync(folder);
  } catch (error) {
    // Another process (the worker and the CLI starting together) may have just made it.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** The database exists but its schema is older than this code expects. */
export class SchemaOutdatedError extends Error {
  override name = 'SchemaOutdatedError';
}

/** The file exists but holds something else (the keys database, another app's database). */
export class NotASnapshotError extends SchemaOutdatedError {
  override name = 'NotASnapshotError';
}

/**
 * Opens the database for the API: read-only, never created, never migrated. A missing file
 * throws (SQLITE_CANTOPEN); a schema older than the code's throws SchemaOutdatedError, since
 * the queries would fail in ways that are harder to explain.
 */
export function openReaderFile(path: string, options: OpenOptions): Database.Database {
  return openCheckedReader(path, options.busyTimeoutMs, (sqlite) => {
    // Another database at DATABASE_PATH (the keys database, say) is named as such, rather than
    // called an old snapshot that a sync would migrate: the worker refuses to touch it.
    assertSnapshot(sqlite);
    const applied = appliedSchemaVersion(sqlite);
    if (applied < expectedSchemaVersion()) {
      throw new SchemaOutdatedError(
        applied === 0
          ? 'the database has no schema yet; run the sync worker (npm run sync) to create it'
          : 'the database schema is older than this version of the API; run the sync worker once to migrate it',
      );
    }
  });
}

/**
 * SQLite's page cache per read-only connection, in KiB (better-sqlite3 builds SQLite with 16 MB).
 * The API holds one connection on its main thread and one per search thread, each filling its
 * cache at start and under load: 16 MB each was 28 MB of the API's memory after start. The
 * kernel's page cache keeps the file's pages anyway, so a page SQLite no longer holds costs a
 * read(2) of memory, not of disk: 2 MB made no measurable difference to the search threads'
 * rankings (median 2.1-2.2 ms either way over 400 never-repeated queries; decision 0076).
 */
const READER_PAGE_CACHE_KIB = 2_048;

/**
 * An existing database opened read-only with its busy timeout, once `check` (what the file must
 * be, and how recent its schema) accepts it; a refused file's connection is closed, not leaked.
 */
export function openCheckedReader(path: string, busyTimeoutMs: number, check: (sqlite: Database.Database) => void): Database.Database {
  const sqlite = new Database(path, { readonly: true, fileMustExist: true });
  try {
    sqlite.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
    sqlite.pragma(`cache_size = -${READER_PAGE_CACHE_KIB}`);
    check(sqlite);
  } catch (error) {
    sqlite.close();
    throw error;
  }
  return sqlite;
}

/**
 * Statements prepared once per connection (a statement belongs to the connection that
 * prepared it): `const prepared = statementsFor((sqlite) => ({ ... }))`, then `prepared(db)`.
 */
export function statementsFor<T>(build: (sqlite: Database.Database) => T): (db: { $client: Database.Database }) => T {
  const cache = new WeakMap<Database.Database, T>();
  return (db) => {
    let statements = cache.get(db.$client);
    if (!statements) {
      statements = build(db.$client);
      cache.set(db.$client, statements);
    }
    return statements;
  };
}

/** Runs `fn` in a write transaction that takes the write lock up front (BEGIN IMMEDIATE). */
export function writeTransaction<T>(db: { $client: Database.Database }, fn: () => T): T {
  return db.$client.transaction(fn).immediate();
}

const STORE_FAILURE_CODES = /^SQLITE_(BUSY|LOCKED|CANTOPEN|NOTADB|CORRUPT|IOERR|READONLY|FULL|PROTOCOL|SCHEMA)/;

/** True for an error that means "the store cannot answer", as opposed to a bug in our code. */
export function isStoreFailure(error: unknown): boolean {
  if (error instanceof SchemaOutdatedError) return true;
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string') {
    return STORE_FAILURE_CODES.test(error.code) || error.code === 'ENOENT';
  }
  return false;
}
