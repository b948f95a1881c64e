import Database from 'better-sqlite3';
import { existsSync, linkSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ensureFolder } from './connection.js';

// One step copies the whole (small) database, so a restore lands in one write transaction.
const ALL_PAGES = () => 1_000_000;

export interface BackupResult {
  path: string;
  bytes: number;
}

/** The copy failed its integrity check, or the file given is not a database. */
export class BackupError extends Error {
  override name = 'BackupError';
}

/**
 * Copies a live database to `target` through SQLite's online backup API: consistent (one
 * read snapshot, the WAL included, unlike a `cp` of a WAL-mode file) and safe while the API
 * and the worker use it. The copy is written under a temporary name beside the target,
 * checked with PRAGMA integrity_check, then linked into place, so `target` is never
 * half-written, and never replaced: of two backups to one name, the second fails.
 */
export async function backupDatabase(sourcePath: string, target: string, busyTimeoutMs: number): Promise<BackupResult> {
  const source = new Database(sourcePath, { readonly: true, fileMustExist: true });
  const partial = join(dirname(target), `.${process.pid}-${Date.now()}.partial`);
  try {
    source.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
    ensureFolder(dirname(target));
    await source.backup(partial, { progress: ALL_PAGES });
    selfContained(partial);
    checkIntegrity(partial);
    // A link fails when the name is taken (a rename would replace it): no backup is ever lost.
    try {
      linkSync(partial, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new BackupError(`${target} already exists: choose a new file name for the backup`);
      throw error;
    }
  } finally {
    source.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(partial + suffix, { force: true });
  }
  return { path: target, bytes: statSync(target).size };
}

/**
 * Restores `backupPath` into the live database at `livePath` in place, through the backup
 * API in one write transaction: running API processes see the restored rows on their next
 * request (data_version changes, the file stays the same), and a leftover -wal of the old
 * file can never be replayed onto the restored one. `prepare` runs on a private copy of the
 * backup first (migrations, carrying over later revocations), so the live file changes once.
 */
export async function restoreDatabase(
  backupPath: string,
  livePath: string,
  busyTimeoutMs: number,
  prepare: (copy: Database.Database) => void,
  /** Tables a running process may add to right after the restore: not compared (assertRestored). */
  growing: readonly string[] = [],
): Promise<void> {
  if (!existsSync(backupPath)) throw new BackupError(`no backup file at ${backupPath}`);
  checkIntegrity(backupPath);
  ensureFolder(dirname(livePath));
  const staged = join(dirname(livePath), `.${process.pid}-${Date.now()}.restoring`);
  const source = new Database(backupPath, { readonly: true, fileMustExist: true });
  try {
    await source.backup(staged, { progress: ALL_PAGES });
  } finally {
    source.close();
  }
  try {
    const copy = new Database(staged, { fileMustExist: true });
    try {
      copy.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
      prepare(copy);
      // A restore into a missing file creates it from these pages: make it a WAL database,
      // as the live one must be (readers never wait for writers).
      copy.pragma('journal_mode = WAL');
      copy.pragma('wal_checkpoint(TRUNCATE)');
      await copy.backup(livePath, { progress: ALL_PAGES });
      assertRestored(copy, livePath, growing);
    } finally {
      copy.close();
    }
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(staged + suffix, { force: true });
  }
}

/**
 * Checks that the live file now holds what was restored. better-sqlite3 takes the backup
 * step's SQLITE_BUSY (another process holds the live file's write lock: a CLI command, the
 * API's last-used write) as "no pages left", so a restore onto a locked file would report
 * success having copied nothing. Every table's rows are compared.
 */
function assertRestored(copy: Database.Database, livePath: string, growing: readonly string[]): void {
  const live = new Database(livePath, { readonly: true, fileMustExist: true });
  try {
    const tables = copy.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).pluck().all() as string[];
    const liveTables = live.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).pluck().all() as string[];
    const same =
      JSON.stringify(tables) === JSON.stringify(liveTables) &&
      tables.every((table) => {
        if (growing.includes(table)) return true;
        const rows = (db: Database.Database) => JSON.stringify(db.prepare(`SELECT * FROM "${table.replaceAll('"', '""')}" ORDER BY rowid`).raw().all());
        return rows(copy) === rows(live);
      });
    if (!same) {
      throw new BackupError(`${livePath} was locked by another process and nothing was restored: retry once it is free (a key command, backup or restore still running)`);
    }
  } finally {
    live.close();
  }
}

/**
 * The copy inherits WAL mode from its source; a backup is better as one file that can be
 * copied anywhere as is, so it is switched to a rollback journal (restoring it into a WAL
 * database keeps the live file in WAL mode).
 */
function selfContained(path: string): void {
  const db = new Database(path, { fileMustExist: true });
  try {
    db.pragma('journal_mode = DELETE');
  } finally {
    db.close();
  }
}

function checkIntegrity(path: string): void {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const result = db.pragma('integrity_check', { simple: true });
    if (result !== 'ok') throw new BackupError(`${path} failed its integrity check: ${String(result)}`);
  } catch (error) {
    if (error instanceof BackupError) throw error;
    throw new BackupError(`${path} is not a readable SQLite database`);
  } finally {
    db?.close();
  }
}
