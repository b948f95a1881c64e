import { ServiceUnavailableError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { isStoreFailure, NotASnapshotError, SchemaOutdatedError, type Db, type OpenOptions } from '../sqlite/sqlite-file.js';
import { isCorruption, ReopeningReader } from '../sqlite/reopening-reader.js';

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

const UNAVAILABLE_MESSAGE = 'The service cannot read its content store right now; please retry in a minute.';
/** The reason of a 503 for a damaged snapshot: a search thread's failure reaches the API's store by it. */
export const DAMAGED_REASON = 'database file is damaged or not a valid SQLite database';

/**
 * A request that awaited (a search waiting for a slot or a server) outlived the connection
 * its session was taken on: the snapshot file was replaced meanwhile. Retrying reads the new one.
 */
export function snapshotReplaced(): ServiceUnavailableError {
  return new ServiceUnavailableError('The content changed while the search ran; please retry.', 'the snapshot was replaced during a search');
}

/**
 * The API's read-only handle on the snapshot. It opens the database lazily, reopens it when
 * the file was replaced or removed (src/db/sqlite/reopening-reader.ts), and turns every store
 * failure into a 503 without ever crashing the process: the API stays up and recovers when
 * the store comes back.
 */
export class SnapshotStore {
  private readonly reader: ReopeningReader<Db>;
  private dataVersion = -1;
  private generation = 0;
  /** Reused while nothing changed: a new object only when the generation moves. */
  private current: StoreSession | undefined;

  /**
   * `open`: connection.ts's openReader (with drizzle's query builder), or for the search threads
   * a plain connection (they run prepared statements only; see sqlite-file.ts for why).
   */
  constructor(path: string, busyTimeoutMs: number, logger: Logger, open: (path: string, options: OpenOptions) => Db) {
    this.reader = new ReopeningReader({ path, open: () => open(path, { busyTimeoutMs }),
      logger,
      store: 'sqlite',
      noun: 'snapshot',
      onWrittenInPlace: 'validate',
    });
  }

  /**
   * An open connection and its generation, or a ServiceUnavailableError. The file's identity
   * (a stat) and data_version (which moves when another process commits: a sync) are checked
   * once per turn of the event loop: the requests read from the sockets in one turn arrived
   * together and share them, which under load turns a stat and a read transaction (two file
   * locks) per request into one per batch, while any later turn sees a new sync or a
   * replaced file. The keys store does the same (src/db/keys/keys-store.ts).
   */
  session(): StoreSession {
    try {
      const db = this.reader.use();
      if (this.reader.checkedNow || this.current?.db !== db) {
        const version = this.reader.dataVersion(db);
        // A new connection starts a new generation even if its version number is the same.
        if (version !== this.dataVersion || this.current?.db !== db) {
          this.dataVersion = version;
          this.generation += 1;
          this.current = { db, generation: this.generation, connection: this.reader.connection };
        }
      }
      this.reader.available();
      return this.current!;
    } catch (error) {
      throw this.failed(error);
    }
  }

  /**
   * The 503 for an error met while querying through a session, or the error unchanged when it
   * is not a store failure (bugs stay 500). The connection is the store's own business,
   * decided in session() and probe() when they use it; but a damaged file found by any query
   * marks the whole store failed (noticeDamage), so that /health says so.
   */
  failure(error: unknown): unknown {
    this.noticeDamage(error);
    return storeUnavailable(error) ?? error;
  }

  /**
   * A query anywhere (a request, a search thread's reason) found the file damaged: every use
   * fails with a 503 until the file changes (src/db/sqlite/reopening-reader.ts), and /health answers
   * 503 `unavailable`. A damaged page serves no request, so no partner gets half a locale
   * while the load balancer thinks the host is fine.
   */
  noticeDamage(error: unknown): void {
    const damaged = isCorruption(error) || (error instanceof ServiceUnavailableError && error.reason === DAMAGED_REASON);
    if (!damaged || this.reader.isBroken) return;
    this.reader.markBroken(isCorruption(error) ? error : Object.assign(new Error(DAMAGED_REASON), { code: 'SQLITE_CORRUPT' }));
    this.current = undefined;
    this.reader.problem(DAMAGED_REASON);
  }

  /** Health probe: a real query, so that a locked or unreadable store shows as down. */
  probe(): StoreSession {
    const session = this.session();
    try {
      session.db.$client.prepare('SELECT count(*) FROM snapshot_state').get();
    } catch (error) {
      throw this.failed(error);
    }
    return session;
  }

  close(): void {
    this.current = undefined;
    this.reader.close();
  }

  /**
   * An error met while the store itself used its connection (opening it, the per-use version
   * check, the health probe): the store decides whether to keep the connection. A busy
   * database is transient and the connection is fine; anything else means the next use
   * opens a new one. A failure during a request's own queries leaves the connection alone:
   * other requests may be using it (an async search), and the per-use check, the file's
   * identity and the version check decide at the next use whether it must be reopened.
   */
  private failed(error: unknown): unknown {
    this.reader.recheck();
    const unavailable = storeUnavailable(error);
    if (!unavailable) return error;
    const code = (error as { code?: string }).code;
    if (isCorruption(error)) this.reader.markBroken(error);
    if (code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED') {
      // The next session opens a new connection, and so starts a new generation.
      this.reader.drop(unavailable.reason);
      this.current = undefined;
    }
    this.reader.problem(unavailable.reason);
    return unavailable;
  }
}

/**
 * The 503 to send for a store failure (a missing, locked, corrupt or outdated snapshot), or
 * undefined for any other error. Pure: used by the error handler, which only maps errors.
 */
export function storeUnavailable(error: unknown): ServiceUnavailableError | undefined {
  if (error instanceof ServiceUnavailableError) return error;
  if (!isStoreFailure(error)) return undefined;
  return new ServiceUnavailableError(UNAVAILABLE_MESSAGE, describe(error), { cause: error });
}

function describe(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'ENOENT' || code === 'SQLITE_CANTOPEN') return 'database file not found or not readable';
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return 'database locked past the busy timeout';
  if (code === 'SQLITE_NOTADB' || code?.startsWith('SQLITE_CORRUPT')) return DAMAGED_REASON;
  if (error instanceof NotASnapshotError) return `the file at DATABASE_PATH ${error.message}`;
  if (error instanceof SchemaOutdatedError) return error.message;
  return `database error ${code ?? 'unknown'}`;
}
