import Database from 'better-sqlite3';
import { NotASnapshotError, SnapshotMissingError, SnapshotNewerError } from '../src/db/connection.js';
import { UsageError } from '../src/errors.js';

/*
 * What an operator reads when DATABASE_PATH cannot be opened as the snapshot (missing, a
 * folder, not SQLite, another database, locked, unwritable): one line naming the path and
 * what to do, never SQLite's own text nor a stack, which is for bugs in our code. Opening
 * refuses before writing anything, so the file is as it was.
 */

/** The failure as the one line to print, or undefined when it is not a problem with the path. */
export function snapshotOpenFailure(error: unknown, path: string, busyTimeoutMs: number): UsageError | undefined {
  if (error instanceof SnapshotMissingError) return new UsageError(error.message);
  if (error instanceof NotASnapshotError || error instanceof SnapshotNewerError) return new UsageError(`DATABASE_PATH ${path} ${error.message}`);
  if (error instanceof Database.SqliteError) {
    const line = sqliteFailure(error.code, path, busyTimeoutMs);
    return line === undefined ? undefined : new UsageError(line);
  }
  const fsError = error as NodeJS.ErrnoException;
  // Creating the snapshot's folder failed (a parent is a file, or cannot hold folders, or is not ours).
  if (fsError instanceof Error && fsError.syscall === 'mkdir') {
    return new UsageError(`DATABASE_PATH ${path}: cannot create its folder ${fsError.path ?? ''} (${fsError.code ?? 'error'}): check DATABASE_PATH`);
  }
  return undefined;
}

function sqliteFailure(code: string, path: string, busyTimeoutMs: number): string | undefined {
  if (code === 'SQLITE_NOTADB') return `DATABASE_PATH ${path} is not a SQLite database; it was left unchanged: check DATABASE_PATH`;
  if (code.startsWith('SQLITE_CANTOPEN')) {
    return `DATABASE_PATH ${path} could not be opened: check that it names a file (not a folder) and that its folder is readable and writable`;
  }
  const reason = storeReason(code, busyTimeoutMs);
  return reason === undefined ? undefined : `the snapshot at ${path} ${reason}`;
}

/**
 * What the file or the disk did, for the codes that are: any other (SQLITE_ERROR from a
 * migration, say) is a bug in our code, and keeps its stack.
 */
function storeReason(code: string, busyTimeoutMs: number): string | undefined {
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return `stayed locked by another process past DATABASE_BUSY_TIMEOUT_MS (${busyTimeoutMs} ms): retry once it has finished`;
  }
  if (code.startsWith('SQLITE_READONLY')) return 'cannot be written: check the permissions of the file, its -wal and -shm files and its folder';
  if (code.startsWith('SQLITE_FULL')) return 'cannot be written: the disk is full';
  if (code.startsWith('SQLITE_CORRUPT')) return 'is damaged: move it aside (with its -wal and -shm files) and run a sync, which rebuilds its content from the CMS';
  if (code.startsWith('SQLITE_IOERR')) return `could not be read or written (${code}): check the disk`;
  return undefined;
}
