import type { ServerResponse } from 'node:http';
import type { Locale } from '../../locale.js';
import type { WaitEnd, WaitObserver } from '../../observability/api-metrics.js';
import { markWaiting, unmarkWaiting } from '../server/waiting-responses.js';

/*
 * The change feed's `wait` (docs/partners.md#waiting-for-changes; decision 0068): a request
 * whose page is empty is held until the feed moves, its time is up, its connection is needed
 * for a new client, or the API stops; then it is answered as any request is (the route reads
 * the feed again and sends the page, empty or not).
 *
 * What moves the feed is what moves the locale's content tag (src/content/locale-view.ts): a
 * sync committed by another process (the store notices it through PRAGMA data_version and
 * the file's identity) and a scheduled article's time coming. Both are polled every
 * WAIT_POLL_MS while anything waits, and not at all otherwise: one tag per waiting locale per
 * poll, so the answer leaves at most WAIT_POLL_MS (plus rebuilding the view after a sync)
 * after the change became visible.
 */

/** How often the content tags are checked while requests wait. */
export const WAIT_POLL_MS = 250;
/** The contract's per-key limit of waiting requests (shared among API processes, see maxPerKey). */
export const MAX_WAITING_PER_KEY = 2;
export interface Waiter {
  keyId: number;
  locale: Locale;
  res: ServerResponse;
  /** The locale's content tag when the feed was last read empty. */
  tag: string;
  /** How long at most, in ms. */
  waitMs: number;
  /**
   * Reads the feed again and answers, returning true; or, unless `force`, returns false when
   * the page is still empty (the tag moved for a change this cursor does not see).
   */
  attempt(force: boolean): boolean;
}

interface Held extends Waiter {
  timer: NodeJS.Timeout;
  onClose: () => void;
}

export class FeedWaits {
  private readonly held = new Set<Held>();
  private readonly perKey = new Map<number, number>();
  private poller: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly deps: {
      /** The locale's content tag now (throws when the store cannot answer). */
      tagOf: (locale: Locale) => string;
      /** Waiting requests one key may have in this process. */
      maxPerKey: number;
      observer?: WaitObserver;
      pollMs?: number;
    },
  ) {}

  /**
   * The per-process share of MAX_WAITING_PER_KEY among `processes` (WEB_CONCURRENCY), as the
   * rate limit is shared: at least one each, so a key may have one waiting request per process
   * when there are more processes than the limit.
   */
  static maxPerKey(processes: number): number {
    return Math.max(1, Math.floor(MAX_WAITING_PER_KEY / Math.max(1, processes)));
  }

  get size(): number {
    return this.held.size;
  }

  /**
   * Holds the request, or returns false when it must be answered at once: the key already
   * has its share of waiting requests, or the API is stopping.
   */
  enter(waiter: Waiter): boolean {
    if (this.stopped) return false;
    const count = this.perKey.get(waiter.keyId) ?? 0;
    if (count >= this.deps.maxPerKey) return false;
    this.perKey.set(waiter.keyId, count + 1);
    const held: Held = Object.assign(waiter, {
      timer: setTimeout(() => this.end(held, 'timeout'), waiter.waitMs),
      onClose: () => this.leave(held, 'gone'),
    });
    this.held.add(held);
    this.deps.observer?.started();
    // Its socket would otherwise be cut by the server's idle timeout (HTTP_REQUEST_TIMEOUT_MS)
    // while it waits: the answer is the timeout here.
    waiter.res.on('timeout', noop);
    waiter.res.once('close', held.onClose);
    markWaiting(waiter.res, () => {
      waiter.res.setHeader('Connection', 'close');
      this.end(held, 'room');
    });
    this.poller ??= setInterval(() => this.poll(), this.deps.pollMs ?? WAIT_POLL_MS);
    return true;
  }

  /** Answers every waiting request now, and any later one at once (the API is stopping). */
  stop(): void {
    this.stopped = true;
    for (const held of [...this.held]) {
      if (!held.res.headersSent) held.res.setHeader('Connection', 'close');
      this.end(held, 'stop');
    }
  }

  private poll(): void {
    const tags = new Map<Locale, string | null>();
    for (const held of [...this.held]) {
      let tag = tags.get(held.locale);
      if (tag === undefined) {
        try {
          tag = this.deps.tagOf(held.locale);
        } catch {
          // The store cannot answer now: the request answers (with that error) at its time.
          tag = null;
        }
        tags.set(held.locale, tag);
      }
      if (tag === null || tag === held.tag || !this.held.has(held)) continue;
      let answered = true;
      try {
        answered = held.attempt(false);
      } catch {
        // attempt answers its own errors; never leave a request held after one.
      }
      if (answered) this.leave(held, 'change');
      else held.tag = tag;
    }
  }

  /** Answers a held request (whatever the feed holds now) and lets it go. */
  private end(held: Held, reason: WaitEnd): void {
    if (!this.held.has(held)) return;
    this.leave(held, reason);
    try {
      held.attempt(true);
    } catch {
      // attempt answers its own errors.
    }
  }

  private leave(held: Held, reason: WaitEnd): void {
    if (!this.held.delete(held)) return;
    clearTimeout(held.timer);
    held.res.off('close', held.onClose);
    unmarkWaiting(held.res);
    const count = (this.perKey.get(held.keyId) ?? 1) - 1;
    if (count > 0) this.perKey.set(held.keyId, count);
    else this.perKey.delete(held.keyId);
    this.deps.observer?.ended(reason);
    if (this.held.size === 0 && this.poller) {
      clearInterval(this.poller);
      this.poller = undefined;
    }
  }
}

function noop(): void {}
