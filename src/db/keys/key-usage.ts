import type { Logger } from '../../logger.js';
import { formatUtcSeconds } from '../../lib/time.js';
import { recordLastUsed } from './keys.js';
import { isCorruption } from '../sqlite/reopening-reader.js';
import { BackgroundWriter } from './background-writer.js';

/** How often the API writes last-used times: at most one write per key per interval. */
export const LAST_USED_INTERVAL_MS = 60_000;

/**
 * Remembers when each key was last used and writes those times to the keys database in one
 * small transaction per interval, on a connection of its own (the API's reader is
 * read-only). A request never waits for this and never fails because of it: a failed write
 * is logged, its times are kept, and the next flush tries again.
 */
export class KeyUsageRecorder extends BackgroundWriter {
  private pending = new Map<number, number>();
  private failing = false;

  constructor(
    path: string,
    private readonly logger: Logger,
    intervalMs = LAST_USED_INTERVAL_MS,
    /** Told of a write that failed because the file is damaged or not a database. */
    private readonly onDamaged: (error: unknown) => void = () => {},
  ) {
    super(path, intervalMs);
  }

  /** One map write per request; the timer starts with the first use. */
  touch(id: number, at: number): void {
    const previous = this.pending.get(id);
    if (previous === undefined || at > previous) this.pending.set(id, at);
    this.startTimer();
  }

  /** Writes what was recorded since the last flush. Never throws. */
  flush(): void {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      recordLastUsed(this.connection(), new Map([...batch].map(([id, at]) => [id, formatUtcSeconds(at)])));
      if (this.failing) this.logger.info({ store: 'keys' }, 'last-used times written again');
      this.failing = false;
    } catch (error) {
      // Keep the times for the next attempt, unless newer ones arrived meanwhile.
      for (const [id, at] of batch) if (!((this.pending.get(id) ?? 0) > at)) this.pending.set(id, at);
      this.closeWriter();
      if (!this.failing) {
        this.logger.warn({ store: 'keys', reason: (error as { code?: string }).code ?? (error as Error).message }, 'could not write last-used times; will retry');
      }
      this.failing = true;
      if (isCorruption(error)) this.onDamaged(error);
    }
  }
}
