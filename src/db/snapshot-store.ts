import { statSync } from 'node:fs';
import { ServiceUnavailableError } from '../errors.js';
import type { Logger } from '../logger.js';
import { isStoreFailure, openReader, statementsFor, type Db } from './connection.js';

export interface StoreSession {
  db: Db;
  /**
   * Changes whenever anything another process committed may have changed, or the connection
   * was reopened: caches keyed by it are never stale by more than one request.
   */
  generation: number;
  /** Changes only when a new connection was opened (the file may be another database). */
  connection: number;
}

// db.pragma() would prepare a new statement on every request.
const prepared = statementsFor((sqlite) => ({ dataVersion: sqlite.prepare('PRAGMA data_version').pluck() }));

const UNAVAILABLE_MESSAGE = 'The service cannot read its content store right now; please retry in a minute.';

/**
 * The API's read-only handle on the snapshot. It opens the database lazily, reopens it when
 * the file was replaced or removed, and turns every store failure into a 503 without ever
 * crashing the process: the API stays up and recovers when the store comes back.
 */
export class SnapshotStore {
  private db: Db | undefined;
  private inode = 0;
  private dataVersion = -1;
  private generation = 0;
  private connection = 0;
  private lastProblem: string | undefined;

  constructor(
    private readonly path: string,
    private readonly busyTimeoutMs: number,
    private readonly logger: Logger,
  ) {}

  /** An open connection and its generation, or a ServiceUnavailableError. */
  session(): StoreSession {
    try {
      const inode = this.currentInode();
      if (this.db && inode !== this.inode) this.drop('the database file was replaced or removed');
      if (!this.db) {
        if (inode === 0) throw Object.assign(new Error('database file not found'), { code: 'ENOENT' });
        this.db = openReader(this.path, { busyTimeoutMs: this.busyTimeoutMs });
        this.inode = inode;
        this.dataVersion = -1;
        this.connection += 1;
      }
      // data_version changes when another connection commits: one cheap call per request.
      const version = prepared(this.db).dataVersion.get() as number;
      if (version !== this.dataVersion) {
        this.dataVersion = version;
        this.generation += 1;
      }
      this.recovered();
      return { db: this.db, generation: this.generation, connection: this.connection };
    } catch (error) {
      throw this.failure(error);
    }
  }

  /**
   * Turns an error met while querying into the 503 to throw, closing the connection when the
   * store is the cause. Errors that are not store failures are returned unchanged (bugs stay 500).
   */
  failure(error: unknown): unknown {
    if (error instanceof ServiceUnavailableError) return error;
    if (!isStoreFailure(error)) return error;
    const reason = describe(error);
    const code = (error as { code?: string }).code;
    // A busy database is transient and the connection is fine; anything else reopens.
    if (code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED') this.drop(reason);
    if (this.lastProblem !== reason) {
      this.lastProblem = reason;
      this.logger.error({ store: 'sqlite', path: this.path, reason }, `snapshot unavailable: ${reason}`);
    }
    return new ServiceUnavailableError(UNAVAILABLE_MESSAGE, reason, { cause: error });
  }

  /** Health probe: a real query, so that a locked or unreadable store shows as down. */
  probe(): StoreSession {
    const session = this.session();
    try {
      session.db.$client.prepare('SELECT count(*) FROM snapshot_state').get();
    } catch (error) {
      throw this.failure(error);
    }
    return session;
  }

  close(): void {
    this.db?.$client.close();
    this.db = undefined;
  }

  private currentInode(): number {
    try {
      return statSync(this.path).ino;
    } catch {
      return 0;
    }
  }

  private drop(reason: string): void {
    if (!this.db) return;
    try {
      this.db.$client.close();
    } catch {
      // Closing a connection to a broken file may fail too; it is being discarded anyway.
    }
    this.db = undefined;
    this.generation += 1;
    this.logger.warn({ store: 'sqlite', reason }, 'closed the snapshot connection');
  }

  private recovered(): void {
    if (this.lastProblem === undefined) return;
    this.logger.info({ store: 'sqlite', previous: this.lastProblem }, 'snapshot available again');
    this.lastProblem = undefined;
  }
}

function describe(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'ENOENT' || code === 'SQLITE_CANTOPEN') return 'database file not found or not readable';
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return 'database locked past the busy timeout';
  if (code === 'SQLITE_NOTADB' || code?.startsWith('SQLITE_CORRUPT')) return 'database file is not a valid SQLite database';
  if (error instanceof Error && error.name === 'SchemaOutdatedError') return error.message;
  return `database error ${code ?? 'unknown'}`;
}
