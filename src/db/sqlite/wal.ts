import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';

/*
 * Keeping the write-ahead log small. SQLite's automatic checkpoints copy the WAL back into the
 * database but never shrink the file: one full sync under read load grew it to hundreds of MB,
 * which then stayed. Two measures: writers cap the file whenever SQLite resets it
 * (journal_size_limit, set in openWriter), and the worker truncates it after each sync.
 */

/** Bytes the WAL file is cut back to whenever SQLite resets it (journal_size_limit). */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

// Long enough to find a moment between the API's short reads; short enough that a reader
// holding on (a long search) never holds the worker: the WAL is then left for the next run.
const CHECKPOINT_WAIT_MS = 1_000;

export interface CheckpointOutcome {
  /** The WAL was copied back completely and cut to zero bytes. */
  truncated: boolean;
  /** Readers (or a writer) kept part of the WAL in use; it stays until the next checkpoint. */
  busy: boolean;
  /** Size of the -wal file and of the database after the checkpoint. */
  walBytes: number;
  databaseBytes: number;
  /** Why the checkpoint could not run at all (it never throws: the sync has already committed). */
  error?: string;
}

/**
 * Checkpoints the WAL and truncates it (PRAGMA wal_checkpoint(TRUNCATE)) when readers allow,
 * waiting at most about a second for them, then reports the file sizes.
 */
// Any connection with its better-sqlite3 handle (the worker's Db): the pragmas need no more.
export function truncateWal(db: { $client: Database.Database }, waitMs = CHECKPOINT_WAIT_MS): CheckpointOutcome {
  const sqlite = db.$client;
  const previousTimeout = sqlite.pragma('busy_timeout', { simple: true }) as number;
  let truncated = false;
  let busy = false;
  let error: string | undefined;
  try {
    sqlite.pragma(`busy_timeout = ${Math.trunc(waitMs)}`);
    const row = sqlite.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    busy = (row[0]?.busy ?? 1) !== 0;
    truncated = !busy;
  } catch (failure) {
    busy = (failure as { code?: string }).code?.startsWith('SQLITE_BUSY') ?? false;
    error = (failure as Error).message;
  } finally {
    sqlite.pragma(`busy_timeout = ${previousTimeout}`);
  }
  return { truncated, busy, ...fileSizes(sqlite.name), ...(error === undefined ? {} : { error }) };
}

/** The sizes of the database file and its WAL, in bytes (0 for a file that does not exist). */
export function fileSizes(databasePath: string): { walBytes: number; databaseBytes: number } {
  return { walBytes: sizeOf(`${databasePath}-wal`), databaseBytes: sizeOf(databasePath) };
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
