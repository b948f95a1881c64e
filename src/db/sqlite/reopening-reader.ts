import type Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { TurnQueue } from '../../lib/turn-queue.js';
import type { Logger } from '../../logger.js';
import { statementsFor } from './sqlite-file.js';

// db.pragma() would prepare a new statement on every request.
const prepared = statementsFor((sqlite) => ({ dataVersion: sqlite.prepare('PRAGMA data_version').pluck() }));

export interface ReaderOptions<D> {
  path: string;
  /** Opens the connection (read-only); throws what opening throws. */
  open: () => D;
  logger: Logger;
  /** `store` in the log lines (`sqlite`, `keys`). */
  store: string;
  /** What the log messages call the database (`snapshot`, `keys database`). */
  noun: string;
  /**
   * The file was written in place (same inode, new ctime): `reopen` drops the connection so
   * the next use reads the file afresh; `validate` opens a second connection to check that the
   * file is still a database this store can open, and keeps the first one (its page cache
   * emptied) when it is. The
   * snapshot validates: its writer checkpoints into the file after every sync, and reopening
   * would cut the searches in flight on the connection (src/content/search.ts).
   */
  onWrittenInPlace: 'reopen' | 'validate';
}

/** SQLite found the file damaged or not a database at all. */
export function isCorruption(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'));
}

/**
 * The API's read-only connection to a database file other processes write (the snapshot,
 * the keys database), shared by both stores: opened lazily; the file's identity (a stat)
 * checked once per turn of the event loop, so a replaced or removed file is reopened from the
 * next turn while the requests read from the sockets in one turn share one system call; the
 * connection dropped after a failure, so that the next use reopens it; and each change of
 * state logged once.
 *
 * The identity is the inode and the ctime: a file overwritten in place (`cp other.db live.db`)
 * keeps its inode, and an open WAL connection would go on answering from its page cache, never
 * reading the new bytes. A file found damaged (SQLITE_CORRUPT or SQLITE_NOTADB, on any use,
 * see markBroken) stays failed until the file changes: every use throws that error again
 * without touching the file, and the first use after a change tries it afresh.
 */
export class ReopeningReader<D extends { $client: Database.Database }> {
  private db: D | undefined;
  private inode = 0;
  private ctimeMs = 0;
  // What the last stat saw: the identity a failure found now is recorded against.
  private seenInode = 0;
  private seenCtimeMs = 0;
  private broken: { error: unknown; inode: number; ctimeMs: number } | undefined;
  /**
   * The connection checked in this turn, until the turn ends: the requests of one turn share
   * one stat. Flushed early to make the next use check again (recheck, markBroken).
   */
  private readonly checkedThisTurn = new TurnQueue<D>(() => {});
  private lastProblem: string | undefined;
  private opened = 0;
  /** Whether the last use() checked the file (first use in its turn, or a new connection). */
  checkedNow = false;
  /** Called when a connection is dropped (the keys store closes its writer too). */
  onDrop: (() => void) | undefined;

  constructor(private readonly options: ReaderOptions<D>) {}

  /** Counts the connections opened: a new one may be to another file. */
  get connection(): number {
    return this.opened;
  }

  /**
   * The connection, after the once-per-turn check of the file (see checkedNow). Throws what
   * stat-ing or opening the file throws. Runs on every request: it allocates nothing.
   */
  use(): D {
    if (!this.checkedThisTurn.isEmpty && this.db) {
      this.checkedNow = false;
      return this.db;
    }
    this.stat();
    const inode = this.seenInode;
    const ctimeMs = this.seenCtimeMs;
    if (this.broken) {
      if (inode === this.broken.inode && ctimeMs === this.broken.ctimeMs) {
        if (this.db) this.drop(`the ${this.options.noun} file is damaged`);
        throw this.broken.error;
      }
      // The file changed since it was found damaged: try it afresh.
      this.broken = undefined;
    }
    if (this.db && inode !== this.inode) this.drop(`the ${this.options.noun} file was replaced or removed`);
    if (this.db && ctimeMs !== this.ctimeMs) this.writtenInPlace();
    if (!this.db) {
      if (inode === 0) throw Object.assign(new Error(`${this.options.noun} file not found`), { code: 'ENOENT' });
      this.db = this.options.open();
      this.inode = inode;
      this.ctimeMs = ctimeMs;
      this.opened += 1;
    }
    this.checkedThisTurn.push(this.db);
    this.checkedNow = true;
    return this.db;
  }

  /**
   * The file was found damaged (by this store or by anyone using its connection): every use
   * fails with `error` until the file changes (see the class comment).
   */
  markBroken(error: unknown): void {
    this.broken = { error, inode: this.seenInode, ctimeMs: this.seenCtimeMs };
    this.checkedThisTurn.flush();
  }

  /** Whether the file is marked damaged (and has not changed since). */
  get isBroken(): boolean {
    return this.broken !== undefined;
  }

  private writtenInPlace(): void {
    if (this.options.onWrittenInPlace === 'reopen') {
      this.drop(`the ${this.options.noun} file was written in place`);
      return;
    }
    try {
      this.options.open().$client.close();
    } catch (error) {
      this.drop(`the ${this.options.noun} file was written in place and cannot be opened again`);
      throw error;
    }
    // The connection's page cache may hold pages the file no longer has: emptied, the next
    // queries read the file itself, and a damaged page fails them (and marks the store).
    this.db!.$client.pragma('shrink_memory');
    this.ctimeMs = this.seenCtimeMs;
  }

  /** Makes the next use check the file again, even in this turn (after a failed use). */
  recheck(): void {
    this.checkedThisTurn.flush();
  }

  /** SQLite's data_version: it moves when another connection commits. */
  dataVersion(db: D): number {
    return prepared(db).dataVersion.get() as number;
  }

  /** Closes the connection so that the next use opens a new one. */
  drop(reason: string): void {
    this.onDrop?.();
    if (!this.db) return;
    try {
      this.db.$client.close();
    } catch {
      // Closing a connection to a broken file may fail too; it is being discarded anyway.
    }
    this.db = undefined;
    this.options.logger.warn({ store: this.options.store, reason }, `closed the ${this.options.noun} connection`);
  }

  /** A failure, logged once per distinct reason until the database is available again. */
  problem(reason: string): void {
    if (this.lastProblem === reason) return;
    this.lastProblem = reason;
    this.options.logger.error({ store: this.options.store, path: this.options.path, reason }, `${this.options.noun} unavailable: ${reason}`);
  }

  /** A successful use: logs the recovery after a failure. */
  available(): void {
    if (this.lastProblem === undefined) return;
    this.options.logger.info({ store: this.options.store, previous: this.lastProblem }, `${this.options.noun} available again`);
    this.lastProblem = undefined;
  }

  close(): void {
    this.db?.$client.close();
    this.db = undefined;
  }

  private stat(): void {
    let stats;
    try {
      stats = statSync(this.options.path, { throwIfNoEntry: false });
    } catch {
      // A folder we may not search: the same as no file (opening says why).
    }
    this.seenInode = stats?.ino ?? 0;
    this.seenCtimeMs = stats?.ctimeMs ?? 0;
  }
}
