import { SearchBusyError } from '../errors.js';

export interface AdmissionLimits {
  /** Searches running at once, all keys together. */
  concurrency: number;
  /** Searches waiting for a slot, all keys together. */
  queue: number;
  /**
   * Longest a search may wait for a slot: one expected to wait longer (from how long searches
   * have been taking) is refused at arrival, and one still waiting then is refused.
   */
  maxWaitMs: number;
  /** Longest a search may take from its arrival, waiting included. */
  timeoutMs: number;
  /** Share (percent) of the running slots, and of running + waiting places, one key may hold. */
  keySharePercent: number;
}

export type RefusalReason = 'queue_full' | 'wait' | 'key_share' | 'timeout';

interface Waiter {
  key: string;
  start(): void;
}

interface KeyLoad {
  running: number;
  held: number;
}

/** Weight of the latest search in the running average of how long searches take. */
const SERVICE_WEIGHT = 0.2;

/**
 * Admission control for search, fair between partners: a bounded number of searches run, a
 * bounded number wait, and past either, or past the time budget, the partner gets a fast
 * `503 search_busy` with Retry-After instead of a queue of seconds. How long a search would
 * wait is bounded in time too, not only in places: the same queue that empties in 100 ms on a
 * quiet host takes seconds on a loaded one, so a search whose expected wait (the searches
 * ahead of it, times how long searches have been taking lately) passes `maxWaitMs` is refused
 * at once, and one that still waits at `maxWaitMs` is refused then. One key may hold only its
 * share of the running slots and of all places, so one partner's burst is refused before it
 * starves the others; waiting searches are started round-robin between keys.
 */
export class Admission {
  private running = 0;
  private queued = 0;
  private admitted = 0;
  private readonly refused: Record<RefusalReason, number> = { queue_full: 0, wait: 0, key_share: 0, timeout: 0 };
  /** Running average of how long an admitted search held its slot (ms); 0 until one ended. */
  private serviceMs = 0;
  private readonly keys = new Map<string, KeyLoad>();
  /** Waiting searches per key; Map order is the round-robin order. */
  private readonly waiting = new Map<string, Waiter[]>();
  readonly maxRunningPerKey: number;
  readonly maxHeldPerKey: number;

  constructor(
    private readonly limits: AdmissionLimits,
    /** Milliseconds, for the service-time average; tests pass their own. */
    private readonly now: () => number = () => performance.now(),
  ) {
    const share = limits.keySharePercent / 100;
    this.maxRunningPerKey = Math.max(1, Math.floor(limits.concurrency * share));
    this.maxHeldPerKey = Math.max(1, Math.floor((limits.concurrency + limits.queue) * share));
  }

  /**
   * Runs `task` when a slot is free for `key`, with a signal that aborts when the time budget
   * passes. The slot is held until the task settles, even when the partner was already told
   * the search timed out, so the limits bound the work really in progress.
   */
  async run<T>(key: string, task: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const load = this.keys.get(key) ?? { running: 0, held: 0 };
    if (load.held >= this.maxHeldPerKey) throw this.refuse('key_share');
    const canStart = this.running < this.limits.concurrency && load.running < this.maxRunningPerKey;
    if (!canStart && this.queued >= this.limits.queue) throw this.refuse('queue_full');
    if (!canStart && this.expectedWaitMs() > this.limits.maxWaitMs) throw this.refuse('wait');

    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(this.refuse('timeout')), this.limits.timeoutMs);
    timer.unref();
    load.held += 1;
    this.keys.set(key, load);
    let started = false;
    try {
      if (canStart) this.take(load);
      else {
        const waitTimer = setTimeout(() => controller.abort(this.refuse('wait')), this.limits.maxWaitMs);
        try {
          await this.wait(key, controller.signal);
        } finally {
          clearTimeout(waitTimer);
        }
      }
      started = true;
      const startedAt = this.now();
      const work = task(controller.signal);
      const release = () => this.release(key, load, this.now() - startedAt);
      work.then(release, release);
      return await Promise.race([work, aborted<T>(controller.signal)]);
    } finally {
      clearTimeout(timer);
      // Refused while waiting: the place is given back at once.
      if (!started) this.unhold(key, load);
    }
  }

  stats(): Record<string, number> {
    return {
      in_flight: this.running,
      queued: this.queued,
      admitted: this.admitted,
      refused_queue_full: this.refused.queue_full,
      refused_wait: this.refused.wait,
      refused_key_share: this.refused.key_share,
      refused_timeout: this.refused.timeout,
      service_ms: Math.round(this.serviceMs),
    };
  }

  /** How long a search arriving now would wait: the rounds of searches ahead of it. */
  private expectedWaitMs(): number {
    return Math.ceil((this.queued + 1) / this.limits.concurrency) * this.serviceMs;
  }

  private wait(key: string, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        key,
        start: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const list = this.waiting.get(key) ?? [];
        const at = list.indexOf(waiter);
        if (at !== -1) {
          list.splice(at, 1);
          if (list.length === 0) this.waiting.delete(key);
          this.queued -= 1;
        }
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const list = this.waiting.get(key);
      if (list) list.push(waiter);
      else this.waiting.set(key, [waiter]);
      this.queued += 1;
    });
  }

  /**
   * Counts a search as running. Done when its slot is given, not when its code resumes: a
   * waiting search resumes a microtask later, and pump() must see the slot taken meanwhile or
   * it would start the whole queue at once.
   */
  private take(load: KeyLoad): void {
    this.running += 1;
    load.running += 1;
    this.admitted += 1;
  }

  private release(key: string, load: KeyLoad, heldMs: number): void {
    this.serviceMs = this.serviceMs === 0 ? heldMs : this.serviceMs + SERVICE_WEIGHT * (heldMs - this.serviceMs);
    this.running -= 1;
    load.running -= 1;
    this.unhold(key, load);
    this.pump();
  }

  private unhold(key: string, load: KeyLoad): void {
    load.held -= 1;
    if (load.held === 0) this.keys.delete(key);
  }

  /** Starts waiting searches while slots are free, taking keys in turn. */
  private pump(): void {
    for (const [key, list] of this.waiting) {
      if (this.running >= this.limits.concurrency) return;
      // A key with a waiting search holds a place, so its load is known.
      const load = this.keys.get(key)!;
      if (load.running >= this.maxRunningPerKey) continue;
      const waiter = list.shift()!;
      this.waiting.delete(key);
      // Back of the line for this key's next search.
      if (list.length > 0) this.waiting.set(key, list);
      this.queued -= 1;
      this.take(load);
      waiter.start();
      return this.pump();
    }
  }

  private refuse(reason: RefusalReason): SearchBusyError {
    this.refused[reason] += 1;
    if (reason === 'key_share') {
      return new SearchBusyError(
        `Your key already has ${this.maxHeldPerKey} ${this.maxHeldPerKey === 1 ? 'search' : 'searches'} running or waiting, its share of search capacity; retry when one has answered.`,
        1,
      );
    }
    if (reason === 'timeout') {
      return new SearchBusyError(
        `The search did not finish within ${this.limits.timeoutMs} ms and was stopped; please retry in a few seconds, with more specific words if it happens again.`,
        Math.ceil(this.limits.timeoutMs / 1000),
      );
    }
    return new SearchBusyError('Search is at capacity right now; please retry in a second.', 1);
  }
}

function aborted<T>(signal: AbortSignal): Promise<T> {
  return new Promise<T>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}
