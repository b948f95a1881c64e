import { statSync } from 'node:fs';
import { ServiceUnavailableError } from '../errors.js';
import type { Logger } from '../logger.js';
import { isStoreFailure, SchemaOutdatedError, statementsFor } from './connection.js';
import { openKeysReader, type KeysDb } from './keys-connection.js';
import { KeyUsageRecorder } from './key-usage.js';

export interface KeysSession {
  db: KeysDb;
  /** Changes whenever another process committed to the keys database, or it was reopened. */
  generation: number;
  /** Runs a read on this connection: a store failure becomes the 503, never a 401. */
  read<T>(fn: (db: KeysDb) => T): T;
  /** Notes that a key answered a request, for its last-used time (written in batches). */
  used(id: number, at: number): void;
}

// db.pragma() would prepare a new statement on every request.
const prepared = statementsFor((sqlite) => ({ dataVersion: sqlite.prepare('PRAGMA data_version').pluck() }));

const UNAVAILABLE_MESSAGE = 'The service cannot check API keys right now; please retry in a minute.';

/**
 * The API's handle on the keys database, with the snapshot store's semantics: opened lazily
 * and read-only, reopened when the file was replaced or after a failure, every store failure
 * a 503 (a partner is never refused because of our own failure), and PRAGMA data_version on
 * each request so a revocation committed by the CLI is refused on the very next request.
 */
export class KeysStore {
  private db: KeysDb | undefined;
  private inode = 0;
  private dataVersion = -1;
  private generation = 0;
  /** The file's identity was checked in this turn of the event loop (see session()). */
  private fileChecked = false;
  private readonly endTurn = () => {
    this.fileChecked = false;
  };
  /** Reused while nothing changed: a new object only when the generation moves. */
  private current: KeysSession | undefined;
  private lastProblem: string | undefined;
  private readonly usage: KeyUsageRecorder;

  constructor(
    private readonly path: string,
    private readonly busyTimeoutMs: number,
    private readonly logger: Logger,
    options: { lastUsedIntervalMs?: number } = {},
  ) {
    this.usage = new KeyUsageRecorder(path, logger, options.lastUsedIntervalMs);
  }

  /**
   * An open connection and its generation, or a ServiceUnavailableError. data_version is read
   * on every call, so a revocation is refused on the very next request; the file's identity
   * (a stat) is checked once per turn of the event loop, as the snapshot store does, and the
   * session object is reused until the generation moves: this runs on every keyed request.
   */
  session(): KeysSession {
    try {
      if (!this.fileChecked || !this.db) {
        const inode = this.currentInode();
        if (this.db && inode !== this.inode) this.drop('the keys database file was replaced or removed');
        if (!this.db) {
          if (inode === 0) throw Object.assign(new Error('keys database file not found'), { code: 'ENOENT' });
          this.db = openKeysReader(this.path, { busyTimeoutMs: this.busyTimeoutMs });
          this.inode = inode;
          this.dataVersion = -1;
          this.current = undefined;
        }
        this.fileChecked = true;
        setImmediate(this.endTurn);
      }
      const version = prepared(this.db).dataVersion.get() as number;
      if (version !== this.dataVersion || this.current === undefined) {
        this.dataVersion = version;
        this.generation += 1;
        const db = this.db;
        this.current = {
          db,
          generation: this.generation,
          read: (fn) => {
            try {
              return fn(db);
            } catch (error) {
              throw this.failure(error);
            }
          },
          used: (id, at) => this.usage.touch(id, at),
        };
      }
      if (this.lastProblem !== undefined) this.recovered();
      return this.current;
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** Turns a store failure into the 503 to throw, dropping the connection so the next use reopens it. */
  failure(error: unknown): unknown {
    if (error instanceof ServiceUnavailableError || !isStoreFailure(error)) return error;
    const reason = describe(error);
    const code = (error as { code?: string }).code;
    if (code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED') this.drop(reason);
    if (this.lastProblem !== reason) {
      this.lastProblem = reason;
      this.logger.error({ store: 'keys', path: this.path, reason }, `keys database unavailable: ${reason}`);
    }
    return new ServiceUnavailableError(UNAVAILABLE_MESSAGE, reason, { cause: error });
  }

  /** Health probe: a real query, so that a locked or unreadable keys database shows as down. */
  probe(): KeysSession {
    const session = this.session();
    session.read((db) => db.$client.prepare('SELECT count(*) FROM api_keys').get());
    return session;
  }

  /** Writes pending last-used times now (tests; the API does it every minute and on close). */
  flushUsage(): void {
    this.usage.flush();
  }

  close(): void {
    this.usage.close();
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
    this.usage.closeWriter();
    if (!this.db) return;
    try {
      this.db.$client.close();
    } catch {
      // Closing a connection to a broken file may fail too; it is being discarded anyway.
    }
    this.db = undefined;
    this.current = undefined;
    this.generation += 1;
    this.logger.warn({ store: 'keys', reason }, 'closed the keys database connection');
  }

  private recovered(): void {
    if (this.lastProblem === undefined) return;
    this.logger.info({ store: 'keys', previous: this.lastProblem }, 'keys database available again');
    this.lastProblem = undefined;
  }
}

function describe(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'ENOENT' || code === 'SQLITE_CANTOPEN') return 'keys database file not found or not readable';
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return 'keys database locked past the busy timeout';
  if (code === 'SQLITE_NOTADB' || code?.startsWith('SQLITE_CORRUPT')) return 'keys database file is not a valid SQLite database';
  if (error instanceof SchemaOutdatedError) return error.message;
  return `keys database error ${code ?? 'unknown'}`;
}
