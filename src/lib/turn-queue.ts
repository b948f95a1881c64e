/**
 * Items gathered during one turn of the event loop and handed over together when the turn
 * ends: the first item of a turn schedules the drain (setImmediate, once per turn), and
 * flush() drains at once, for a caller that must not wait for the end of the turn. Requests
 * read from the sockets in one turn are answered in that turn, so what is done once per item
 * can be done once per turn instead. The users say what was measured for their own batch:
 * src/http/fast/turn-ends.ts (responses), src/lib/log-batch.ts (log lines),
 * src/db/sqlite/reopening-reader.ts (a file check).
 */
export class TurnQueue<T> {
  private pending: T[] = [];

  /** `drain` gets the items in the order they were pushed; never an empty list. */
  constructor(private readonly drain: (items: T[]) => void) {}

  push(item: T): void {
    if (this.pending.length === 0) setImmediate(this.flush);
    this.pending.push(item);
  }

  /** Whether anything was pushed since the last drain. */
  get isEmpty(): boolean {
    return this.pending.length === 0;
  }

  /** Drains what is pending now (bound: it can be passed as a callback). */
  readonly flush = (): void => {
    if (this.pending.length === 0) return;
    const items = this.pending;
    this.pending = [];
    this.drain(items);
  };
}
