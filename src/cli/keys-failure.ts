import Database from 'better-sqlite3';
import { UsageError } from '../errors.js';

/*
 * What an editor reads when the keys database fails under a command (locked past the busy
 * timeout, read-only, disk full, damaged): one line saying what to do, never SQLite's own
 * text (it can quote SQL) nor a stack, which is for bugs in our code.
 */

/** The failure as the one line to print, or undefined when it is not a database failure. */
export function keysDatabaseFailure(error: unknown, path: string, busyTimeoutMs: number | undefined): UsageError | undefined {
  if (!(error instanceof Database.SqliteError)) return undefined;
  return new UsageError(`the keys database at ${path} ${failureReason(error.code, busyTimeoutMs)}`);
}

function failureReason(code: string, busyTimeoutMs: number | undefined): string {
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    const waited = busyTimeoutMs === undefined ? '' : ` (${busyTimeoutMs} ms)`;
    return `stayed locked by another process past DATABASE_BUSY_TIMEOUT_MS${waited}: retry once the other command, restore or backup has finished`;
  }
  if (code.startsWith('SQLITE_READONLY')) return 'cannot be written: check the permissions of the file, its -wal and -shm files and its folder';
  if (code.startsWith('SQLITE_FULL')) return 'cannot be written: the disk is full';
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') return 'is damaged: restore it from a backup ("keys restore")';
  if (code.startsWith('SQLITE_IOERR')) return `could not be read or written (${code}): check the disk`;
  if (code.startsWith('SQLITE_CANTOPEN')) return 'could not be opened: check that it and its folder exist and are readable';
  return `failed (${code})`;
}
