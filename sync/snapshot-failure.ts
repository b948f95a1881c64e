import Database from 'better-sqlite3';
import { accessSync, constants, statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { NotASnapshotError, SnapshotMissingError, SnapshotNewerError } from '../src/db/sqlite/connection.js';
import { UsageError } from '../src/errors.js';

/*
 * What an operator reads when the snapshot at DATABASE_PATH cannot be opened (missing, a
 * folder, not SQLite, another database, locked, unwritable) or a sync's own reads and writes
 * fail on it (a full or read-only disk from the very first write, a damaged file): one line
 * naming the path and what to do, never SQLite's own text nor a stack, which is for bugs in
 * our code. Opening refuses before writing anything, so the file is as it was.
 */

/** The failure to open as the one line to print, or undefined when it is not a problem with the path. */
export function snapshotOpenFailure(error: unknown, path: string, busyTimeoutMs: number): UsageError | undefined {
  if (error instanceof SnapshotMissingError) return new UsageError(error.message);
  if (error instanceof NotASnapshotError || error instanceof SnapshotNewerError) return new UsageError(`DATABASE_PATH ${path} ${error.message}`);
  if (error instanceof Database.SqliteError) {
    if (error.code === 'SQLITE_NOTADB') {
      return new UsageError(
        `DATABASE_PATH ${path} is not a SQLite database; it was left unchanged: check DATABASE_PATH ` +
          `(if it is the snapshot, its first page is damaged: ${rebuildAdvice(path)})`,
      );
    }
    const disk = diskProblem(path);
    if (disk !== undefined && /^SQLITE_(CANTOPEN|READONLY|IOERR|FULL)/.test(error.code)) return new UsageError(`the snapshot at ${path} ${disk}`);
    if (error.code.startsWith('SQLITE_CANTOPEN')) {
      return new UsageError(
        `DATABASE_PATH ${path} could not be opened: check that it names a file (not a folder) and that its folder is readable and writable`,
      );
    }
    const line = snapshotStoreFailure(error, path, busyTimeoutMs);
    return line === undefined ? undefined : new UsageError(line);
  }
  const fsError = error as NodeJS.ErrnoException;
  // Creating the snapshot's folder failed (a parent is a file, or cannot hold folders, or is not ours).
  if (fsError instanceof Error && fsError.syscall === 'mkdir') {
    return new UsageError(`DATABASE_PATH ${path}: cannot create its folder ${fsError.path ?? ''} (${fsError.code ?? 'error'}): check DATABASE_PATH`);
  }
  return undefined;
}

/**
 * What a sync's own write or read of the snapshot met, as the one line to print and record,
 * or undefined when it is not the file's or the disk's doing: any other code (SQLITE_ERROR
 * from a migration, say) is a bug in our code, and keeps its stack.
 */
export function snapshotStoreFailure(error: unknown, path: string, busyTimeoutMs?: number): string | undefined {
  if (!(error instanceof Database.SqliteError)) return undefined;
  const code = error.code;
  // SQLite's code says which call failed (growing the -shm file, say), not why: the disk does.
  const disk = /^SQLITE_(CANTOPEN|READONLY|IOERR|FULL)/.test(code) ? diskProblem(path) : undefined;
  if (disk !== undefined) return `the snapshot at ${path} ${disk}`;
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    const timeout = busyTimeoutMs === undefined ? '' : ` (${busyTimeoutMs} ms)`;
    return `the snapshot at ${path} stayed locked by another process past DATABASE_BUSY_TIMEOUT_MS${timeout}: retry once it has finished`;
  }
  if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN')) {
    return `the snapshot at ${path} cannot be written: check that the disk is not mounted read-only, and the permissions of the file, its -wal and -shm files and its folder`;
  }
  if (code.startsWith('SQLITE_FULL')) return `the snapshot at ${path} cannot be written: the disk is full; free space and run the sync again`;
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
    return `the snapshot at ${path} is damaged (SQLite found corrupt pages) and a sync does not repair it in place: ${rebuildAdvice(path)}`;
  }
  if (code.startsWith('SQLITE_IOERR')) return `the snapshot at ${path} could not be read or written (${code}): check the disk`;
  return undefined;
}

/**
 * A damaged snapshot is rebuilt into a new file, never repaired in place: its change feed
 * cannot be trusted, and a sync writing into a damaged file may lose what it writes. A new
 * file gets a new feed epoch, so every mirror is told (400 invalid_cursor) to read the feed
 * again from the start, and loses nothing. The -wal and -shm files go too: left beside a new
 * file, SQLite would replay the old log into it.
 */
export function rebuildAdvice(path: string): string {
  const aside = `${path}.damaged`;
  return (
    `stop the sync worker, move the file aside with its -wal and -shm files ` +
    `(mv ${path} ${aside}; mv ${path}-wal ${aside}-wal; mv ${path}-shm ${aside}-shm), ` +
    `then run "npm run sync -- --once --full" (or start the worker), which builds a new snapshot from the CMS`
  );
}

/** What the disk holding `path` does to writes (full, read-only), or undefined when it is fine. */
function diskProblem(path: string): string | undefined {
  const folder = dirname(path);
  try {
    accessSync(folder, constants.W_OK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EROFS') {
      return 'cannot be written: its disk is mounted read-only; remount it read-write, or set DATABASE_PATH to a writable place';
    }
  }
  try {
    const { bavail, bsize } = statfsSync(folder);
    // Less than a page or two left: SQLite fails wherever it first needs one.
    if (bavail * bsize < 64 * 1024) return 'cannot be written: the disk is full; free space and run the sync again';
  } catch {
    // Not knowable here: the code's own line applies.
  }
  return undefined;
}
