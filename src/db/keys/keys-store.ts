import { ServiceUnavailableError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { isStoreFailure, SchemaOutdatedError } from '../sqlite/connection.js';
import { openKeysReader, type KeysDb } from './keys-connection.js';
import { KeyUsageRecorder } from './key-usage.js';
import { isCorruption, ReopeningReader } from '../sqlite/reopening-reader.js';
import { UsageCounter } from './usage-counter.js';

export interface KeysSession {
  db: KeysDb;
  /** Changes whenever another process committed to the keys database, or it was reopened. */
  generation: number;
  /** Runs a read on this connection: a store failure becomes the 503, never a 401. */
  read<T>(fn: (db: KeysDb) => T): T;
  /** Notes that a key answered a request, for its last-used time (written in batches). */
  used(id: number, at: number): void;
}

const UNAVAILABLE_MESSAGE = 'The service cannot check API keys right now; please retry in a minute.';

/**
 * The API's handle on the keys database, with the snapshot store's semantics: opened lazily
 * and read-only, reopened when the file was replaced or after a failure, every store failure
 * a 503 (a partner is never refused because of our own failure), and PRAGMA data_version on
 * each request so a revocation committed by the CLI is refused on the very next request.
 */
export class KeysStore {
  private readonly reader: ReopeningReader<KeysDb>;
  private dataVersion = -1;
  private generation = 0;
  /** Reused while nothing changed: a new object only when the generation moves. */
  private current: KeysSession | undefined;
  private readonly usage: KeyUsageRecorder;
  /** Usage per key and day (src/db/keys/usage-counter.ts): fed by the app's per-response hook (src/http/pipeline/usage-hook.ts). */
  readonly counts: UsageCounter;

  constructor(
    path: string,
    busyTimeoutMs: number,
    logger: Logger,
    options: { lastUsedIntervalMs?: number; usageFlushIntervalMs?: number } = {},
  ) {
    // A last-used write that finds the file damaged fails the store like a read would: keys
    // are never answered from memory once their file cannot be read.
    this.usage = new KeyUsageRecorder(path, logger, options.lastUsedIntervalMs, (error) => this.failure(error));
    this.counts = new UsageCounter(path, logger, options.usageFlushIntervalMs, (error) => this.failure(error));
    this.reader = new ReopeningReader({
      path,
      open: () => openKeysReader(path, { busyTimeoutMs }),
      logger,
      store: 'keys',
      noun: 'keys database',
      // Reopening costs one open (no search runs on it): a file written in place is read afresh.
      onWrittenInPlace: 'reopen',
    });
    // A broken or replaced file: the last-used writer reopens with the reader.
    this.reader.onDrop = () => {
      this.usage.closeWriter();
      this.counts.closeWriter();
    };
  }

  /**
   * An open connection and its generation, or a ServiceUnavailableError. The file's identity
   * (a stat) and data_version are read at the first call of each turn of the event loop, as
   * the snapshot store does, and the session object is reused until the generation moves:
   * this runs on every keyed request. The requests read from the sockets in one turn were
   * received before its first call ran, so a request sent after a revocation was committed is
   * read in a later turn and refused (decision 0077); one data_version per request was a
   * tenth of a cached answer's CPU.
   */
  session(): KeysSession {
    try {
      const db = this.reader.use();
      if (!this.reader.checkedNow && this.current?.db === db) {
        this.reader.available();
        return this.current;
      }
      const version = this.reader.dataVersion(db);
      // A new connection starts a new generation even if its version number is the same.
      if (version !== this.dataVersion || this.current?.db !== db) {
        this.dataVersion = version;
        this.generation += 1;
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
      this.reader.available();
      return this.current;
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** Turns a store failure into the 503 to throw, dropping the connection so the next use reopens it. */
  failure(error: unknown): unknown {
    if (error instanceof ServiceUnavailableError || !isStoreFailure(error)) return error;
    this.reader.recheck();
    const reason = describe(error);
    const code = (error as { code?: string }).code;
    if (isCorruption(error)) this.reader.markBroken(error);
    if (code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED') {
      this.reader.drop(reason);
      this.current = undefined;
    }
    this.reader.problem(reason);
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
    this.counts.flush();
  }

  close(): void {
    this.usage.close();
    this.counts.close();
    this.current = undefined;
    this.reader.close();
  }
}

function describe(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'ENOENT' || code === 'SQLITE_CANTOPEN') return 'keys database file not found or not readable';
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return 'keys database locked past the busy timeout';
  if (code === 'SQLITE_NOTADB' || code?.startsWith('SQLITE_CORRUPT')) return 'keys database file is damaged or not a valid SQLite database';
  if (error instanceof SchemaOutdatedError) return error.message;
  return `keys database error ${code ?? 'unknown'}`;
}
