import type Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import type { Logger } from '../logger.js';
import { statementsFor } from './connection.js';

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
}

/**
 * The API's read-only connection to a database file other processes write (the snapshot,
 * the keys database), shared by both stores: opened lazily; the file's identity (a stat)
 * checked once per turn of the event loop, so a replaced or removed file is reopened from the
 * next turn while the requests read from the sockets in one turn share one system call; the
 * connection dropped after a failure, so that the next use reopens it; and each change of
 * state logged once.
 */
export class ReopeningReader<D extends { $client: Database.Database }> {
  private db: D | undefined;
  private inode = 0;
  private checkedThisTurn = false;
  private readonly endTurn = () => {
    this.checkedThisTurn = false;
  };
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
    if (this.checkedThisTurn && this.db) {
      this.checkedNow = false;
      return this.db;
    }
    const inode = this.currentInode();
    if (this.db && inode !== this.inode) this.drop(`the ${this.options.noun} file was replaced or removed`);
    if (!this.db) {
      if (inode === 0) throw Object.assign(new Error(`${this.options.noun} file not found`), { code: 'ENOENT' });
      this.db = this.options.open();
      this.inode = inode;
      this.opened += 1;
    }
    this.checkedThisTurn = true;
    this.checkedNow = true;
    setImmediate(this.endTurn);
    return this.db;
  }

  /** Makes the next use check the file again, even in this turn (after a failed use). */
  recheck(): void {
    this.checkedThisTurn = false;
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

  private currentInode(): number {
    try {
      return statSync(this.options.path).ino;
    } catch {
      return 0;
    }
  }
}
