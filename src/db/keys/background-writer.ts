import Database from 'better-sqlite3';

// A background write may wait this long for the CLI's write lock; it is retried at the next tick.
const WRITER_BUSY_TIMEOUT_MS = 50;

/*
 * What the API's two background writers to the keys database share (the keys' last-used times,
 * src/db/keys/key-usage.ts, and usage per key and day, src/db/keys/usage-counter.ts): a
 * connection of their own, opened on the first write and forgotten when the file may have been
 * replaced, and a timer that starts with the first thing to write and writes every interval.
 */
export abstract class BackgroundWriter {
  protected writer: Database.Database | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    protected readonly path: string,
    protected readonly intervalMs: number,
  ) {}

  /** Writes what is pending. Never throws. */
  abstract flush(): void;

  /** Starts the timer, if it is not running yet (on the first thing to write). */
  protected startTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.flush(), this.intervalMs);
    this.timer.unref();
  }

  /** Writes what is pending and stops the timer (on shutdown). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.flush();
    this.closeWriter();
  }

  /** The writer connection, opened on first use. */
  protected connection(): Database.Database {
    if (!this.writer) {
      const sqlite = new Database(this.path, { fileMustExist: true });
      sqlite.pragma(`busy_timeout = ${WRITER_BUSY_TIMEOUT_MS}`);
      this.writer = sqlite;
    }
    return this.writer;
  }

  /** Forgets the writer connection (the file may have been replaced); the next flush reopens it. */
  closeWriter(): void {
    try {
      this.writer?.close();
    } catch {
      // Discarded either way.
    }
    this.writer = undefined;
  }
}
