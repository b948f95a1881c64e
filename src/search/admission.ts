import { SearchBusyError } from '../errors.js';

export interface AdmissionLimits {
  /** Searches running at once, all keys together. */
  concurrency: number;
  /** Searches waiting for a slot, all keys together (one key alone may hold all of them). */
  queue: number;
  /**
   * Longest a search may wait for a slot: one expected to wait longer (from the searches that
   * would start before it and how long searches have been taking) is refused at arrival, and
   * one still waiting then is refused.
   */
  maxWaitMs: number;
  /** Longest a search may take from its arrival, waiting included. */
  timeoutMs: number;
}

/**
 * Why a search got `503 search_busy`: `wait` (it could not start within the wait bound),
 * `queue_full` (every place taken and no other key held more searches than its own), `shed` (it was
 * waiting, and a key with a shorter queue took its place), `timeout` (its time budget passed).
 */
export type RefusalReason = 'queue_full' | 'wait' | 'shed' | 'timeout';

interface Waiter {
  start(): void;
  refuse(reason: RefusalReason): void;
}

/** Weight of the latest search in the running average of how long searches take. */
const SERVICE_WEIGHT = 0.2;

/**
 * Admission control for search: work-conserving and max-min fair between partners (decision
 * 0070). A search starts at once while a slot is free, whoever sends it, so a lone partner may
 * use the whole capacity; one that must wait joins its key's FIFO queue, and freed slots go to
 * the keys in turn (round-robin, the key with the fewest searches running first), so when keys
 * compete each gets an equal share of the slots and a light key's search waits for at most one
 * turn of each other key, however many searches a burst queued. A search is refused only when
 * it could not start in time: when the searches that would start before it (each other key's
 * queue up to this key's own length, round-robin) times how long searches have been taking
 * lately pass `maxWaitMs`, at arrival, or when it still waits at `maxWaitMs`. The places of
 * the queue bound memory, not fairness: when they are all taken, the newest search of the
 * key holding the most searches gives its place up (the arriving one, when no key holds more
 * than its own would).
 * Past any bound, or past the time budget, the partner gets a fast `503 search_busy` with
 * Retry-After instead of a queue of seconds.
 */
export class Admission {
  private running = 0;
  private queued = 0;
  private admitted = 0;
  private readonly refused: Record<RefusalReason, number> = { queue_full: 0, wait: 0, shed: 0, timeout: 0 };
  /** Running average of how long an admitted search held its slot (ms); 0 until one ended. */
  private serviceMs = 0;
  /** Searches running per key (keys with none are absent). */
  private readonly runningByKey = new Map<string, number>();
  /** Waiting searches per key, oldest first; Map order is the round-robin order. */
  private readonly waiting = new Map<string, Waiter[]>();

  constructor(
    private readonly limits: AdmissionLimits,
    /** Milliseconds, for the service-time average; tests pass their own. */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Runs `task` when a slot is free for `key`, with a signal that aborts when the time budget
   * passes. The slot is held until the task settles, even when the partner was already told
   * the search timed out, so the limits bound the work really in progress.
   */
  async run<T>(key: string, task: (signal: AbortSignal) => Promise<T>): Promise<T> {
    // Nothing waits while a slot is free: every release starts waiting searches first.
    const canStart = this.running < this.limits.concurrency;
    if (!canStart) this.makeRoom(key);

    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(this.refuse('timeout')), this.limits.timeoutMs);
    timer.unref();
    try {
      if (canStart) this.take(key);
      else {
        const waitTimer = setTimeout(() => controller.abort(this.refuse('wait')), this.limits.maxWaitMs);
        try {
          await this.wait(key, controller);
        } finally {
          clearTimeout(waitTimer);
        }
      }
      const startedAt = this.now();
      const work = task(controller.signal);
      const release = () => this.release(key, this.now() - startedAt);
      work.then(release, release);
      return await Promise.race([work, aborted<T>(controller.signal)]);
    } finally {
      clearTimeout(timer);
    }
  }

  stats(): Record<string, number> {
    return {
      in_flight: this.running,
      queued: this.queued,
      admitted: this.admitted,
      refused_queue_full: this.refused.queue_full,
      refused_wait: this.refused.wait,
      refused_shed: this.refused.shed,
      refused_timeout: this.refused.timeout,
      service_ms: Math.round(this.serviceMs),
    };
  }

  /**
   * Refuses (throws) a search of `key` that cannot wait, or frees a place for it: it cannot
   * start within the wait bound, or every place is taken and no other key holds more searches
   * (running and waiting) than this key would with it (then it is the one refused); else the
   * newest waiting search of the key holding the most is shed.
   */
  private makeRoom(key: string): void {
    const own = (this.waiting.get(key)?.length ?? 0) + 1;
    if (this.expectedWaitMs(key, own) > this.limits.maxWaitMs) throw this.refuse('wait');
    if (this.queued < this.limits.queue) return;
    const held = (k: string) => (this.runningByKey.get(k) ?? 0) + (this.waiting.get(k)?.length ?? 0);
    let heaviest: string | undefined;
    // Ties go against the arriving search: a key never sheds one that holds no more than it.
    let most = held(key) + 1;
    for (const other of this.waiting.keys()) {
      if (other !== key && held(other) > most) [heaviest, most] = [other, held(other)];
    }
    if (heaviest === undefined) throw this.refuse('queue_full');
    const list = this.waiting.get(heaviest)!;
    const shed = list.pop()!;
    if (list.length === 0) this.waiting.delete(heaviest);
    this.queued -= 1;
    shed.refuse('shed');
  }

  /**
   * How long the `own`-th waiting search of a key would wait: round-robin starts at most `own`
   * searches of each other key before it, and the running ones must end first.
   */
  private expectedWaitMs(key: string, own: number): number {
    let ahead = own;
    for (const [other, list] of this.waiting) if (other !== key) ahead += Math.min(list.length, own);
    return Math.ceil(ahead / this.limits.concurrency) * this.serviceMs;
  }

  private wait(key: string, controller: AbortController): Promise<void> {
    const { signal } = controller;
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        // Shed by makeRoom(), which already took it out of the queue.
        refuse: (reason) => controller.abort(this.refuse(reason)),
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
  private take(key: string): void {
    this.running += 1;
    this.runningByKey.set(key, (this.runningByKey.get(key) ?? 0) + 1);
    this.admitted += 1;
  }

  private release(key: string, heldMs: number): void {
    this.serviceMs = this.serviceMs === 0 ? heldMs : this.serviceMs + SERVICE_WEIGHT * (heldMs - this.serviceMs);
    this.running -= 1;
    const left = (this.runningByKey.get(key) ?? 1) - 1;
    if (left === 0) this.runningByKey.delete(key);
    else this.runningByKey.set(key, left);
    this.pump();
  }

  /**
   * Starts waiting searches while slots are free: each from the waiting key with the fewest
   * searches running, the first in round-robin order among equals, which then goes to the back.
   */
  private pump(): void {
    while (this.running < this.limits.concurrency && this.waiting.size > 0) {
      let chosen: string | undefined;
      let fewest = Infinity;
      for (const key of this.waiting.keys()) {
        const n = this.runningByKey.get(key) ?? 0;
        if (n < fewest) [chosen, fewest] = [key, n];
        if (n === 0) break;
      }
      const list = this.waiting.get(chosen!)!;
      const waiter = list.shift()!;
      this.waiting.delete(chosen!);
      if (list.length > 0) this.waiting.set(chosen!, list);
      this.queued -= 1;
      this.take(chosen!);
      waiter.start();
    }
  }

  private refuse(reason: RefusalReason): SearchBusyError {
    this.refused[reason] += 1;
    if (reason === 'timeout') {
      return new SearchBusyError(
        `The search did not finish within ${this.limits.timeoutMs} ms and was stopped; please retry in a few seconds, with more specific words if it happens again.`,
        Math.ceil(this.limits.timeoutMs / 1000),
      );
    }
    if (reason === 'queue_full' || reason === 'shed') {
      return new SearchBusyError(
        'Search is at capacity and your key has the most searches waiting; please retry in a second, or send fewer at once.',
        1,
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
