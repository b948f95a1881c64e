import { Worker } from 'node:worker_threads';
import { ServiceUnavailableError } from '../../../errors.js';
import type { Logger } from '../../../logger.js';
import type { SearchPage } from '../../engine.js';
import type { CacheStats, JobResult, LogMessage, ReadyMessage, SearchJob, WorkerSetup } from './protocol.js';
import { workerScript } from './worker-script.js';

/*
 * One piece on purpose (about 300 lines): the pool is one state machine over its slots (a
 * thread starting, warming, searching, refreshing its views after a sync, dying and being
 * replaced), and every transition reads and writes the same slot fields; the admission of
 * searches is outside it (src/search/admission.ts).
 */

interface Task {
  job: SearchJob;
  signal: AbortSignal | undefined;
  resolve(page: SearchPage): void;
  reject(error: unknown): void;
  onAbort?: () => void;
}

interface Slot {
  index: number;
  worker: Worker | undefined;
  task: Task | undefined;
  /** The job the thread is working on, even one whose partner was already answered. */
  pendingId: number | undefined;
  /** The thread has built its views: from then on a search over budget is its own fault. */
  ready: boolean;
  /** The thread is building (or checking) its views, at start or in a refresh round: not idle. */
  warming: boolean;
  /** Threads that failed in a row on this slot, and the timer of the next one's start. */
  failures: number;
  respawn: NodeJS.Timeout | undefined;
  cache: CacheStats;
}

const NO_CACHE: CacheStats = { hits: 0, misses: 0, bytes: 0, entries: 0 };
const RESPAWN_FIRST_MS = 250;
const RESPAWN_MAX_MS = 30_000;
/**
 * Each thread is its own V8 isolate. On Node 24 an isolate's young generation may grow to
 * 192 MB on a machine of this size (64 MB semi-spaces), and a search thread's short-lived
 * arrays make it grow: three isolates made most of the API's RSS (docs/operations.md, "Memory").
 * 24 MB (8 MB semi-spaces; the Procfile gives the main thread 16, as its answers allocate more
 * per request) bounds each thread however the API was started, at no cost measured in search
 * latency.
 */
const THREAD_YOUNG_GENERATION_MB = 24;

/**
 * A fixed number of search threads, each running one search at a time. A search whose signal
 * aborts (its time budget passed) is stopped for real: its thread is terminated and a fresh
 * one started in its place. The API starts every thread when it starts (start()); elsewhere
 * (tests, tools) a thread starts with its first search.
 * Admission control (src/search/admission.ts) decides what reaches the pool; searches beyond
 * the free threads wait here in order.
 */
export class WorkerPool {
  private readonly slots: Slot[];
  private readonly waiting: Task[] = [];
  private refreshing: NodeJS.Timeout | undefined;
  /** Threads still to refresh in the current round, one at a time. */
  private round: Slot[] = [];
  /** Slots started by start() whose thread has not yet warmed (or failed) once, and who waits for that. */
  private unwarmed = new Set<Slot>();
  private onceWarmed: (() => void) | undefined;
  private warmedOnce: Promise<void> | undefined;
  private nextId = 1;
  private replaced = 0;
  private closed = false;

  constructor(
    size: number,
    private readonly setup: WorkerSetup,
    private readonly logger: Logger,
  ) {
    this.slots = Array.from({ length: size }, (_, index) => ({ index, worker: undefined, task: undefined, pendingId: undefined, ready: false, warming: false, failures: 0, respawn: undefined, cache: NO_CACHE }));
  }

  run(job: Omit<SearchJob, 'id'>, signal?: AbortSignal): Promise<SearchPage> {
    if (this.closed) return Promise.reject(new ServiceUnavailableError('Search is shutting down; please retry.'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<SearchPage>((resolve, reject) => {
      const task: Task = { job: { ...job, id: this.nextId++ }, signal, resolve, reject };
      const idle = this.slots.find((s) => s.task === undefined && s.pendingId === undefined && !s.warming);
      if (idle) return this.dispatch(idle, task);
      this.waiting.push(task);
      task.onAbort = () => {
        const at = this.waiting.indexOf(task);
        if (at !== -1) this.waiting.splice(at, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', task.onAbort, { once: true });
    });
  }

  /**
   * Starts every thread now, each building its views of the snapshot (a thread started by a
   * search makes that search wait for it: about a second on 110,000 articles), then refreshes
   * them: every `refreshMs` the idle threads are asked, one after the other, to look for a new
   * snapshot and rebuild their views, so that the first searches after a sync do not wait for
   * that. One thread at a time: while it rebuilds (a few hundred ms per changed locale on
   * 100,000 articles) it is not idle, and searches go to the others or wait here for it.
   * Resolves when every thread has built its views and rehearsed once (or failed): the API
   * opens its port then (src/api-process.ts).
   */
  start(): Promise<void> {
    if (this.closed) return Promise.resolve();
    for (const slot of this.slots) {
      if (slot.worker) continue;
      slot.worker = this.spawn(slot);
      this.unwarmed.add(slot);
    }
    this.refreshing ??= setInterval(() => this.refreshRound(), this.setup.refreshMs ?? 1_000).unref();
    // Settled once every thread started here has built its views and rehearsed, or failed.
    this.warmedOnce ??= new Promise((resolve) => {
      this.onceWarmed = resolve;
    });
    this.settleStart(undefined);
    return this.warmedOnce;
  }

  /** Takes `slot` (if any) off the threads start() waits for; settles start() when none is left. */
  private settleStart(slot: Slot | undefined): void {
    if (slot) this.unwarmed.delete(slot);
    if (this.unwarmed.size > 0 && !this.closed) return;
    this.onceWarmed?.();
    this.onceWarmed = undefined;
  }

  /** Starts a round of refreshes unless one is still going (a slow rebuild). */
  private refreshRound(): void {
    if (this.closed || this.round.length > 0) return;
    this.round = this.slots.filter((s) => s.worker !== undefined);
    this.refreshNext();
  }

  /** Asks the next idle thread of the round to refresh; a busy one is skipped this round. */
  private refreshNext(): void {
    if (this.closed || this.slots.some((s) => s.warming)) return;
    for (let slot = this.round.shift(); slot; slot = this.round.shift()) {
      if (!slot.worker || !slot.ready || slot.task || slot.pendingId !== undefined) continue;
      slot.warming = true;
      slot.worker.postMessage({ warm: true });
      return;
    }
  }

  stats(): { workers: number; busy: number; waiting: number; replaced: number; cache: CacheStats } {
    const cache = { ...NO_CACHE };
    for (const slot of this.slots) {
      cache.hits += slot.cache.hits;
      cache.misses += slot.cache.misses;
      cache.bytes += slot.cache.bytes;
      cache.entries += slot.cache.entries;
    }
    return {
      workers: this.slots.filter((s) => s.worker).length,
      busy: this.slots.filter((s) => s.task || s.pendingId !== undefined).length,
      waiting: this.waiting.length,
      replaced: this.replaced,
      cache,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.settleStart(undefined);
    clearInterval(this.refreshing);
    for (const slot of this.slots) clearTimeout(slot.respawn);
    for (const task of this.waiting.splice(0)) task.reject(new ServiceUnavailableError('Search is shutting down; please retry.'));
    await Promise.all(
      this.slots.map(async (slot) => {
        const worker = slot.worker;
        slot.worker = undefined;
        if (slot.task) this.settle(slot)?.reject(new ServiceUnavailableError('Search is shutting down; please retry.'));
        await worker?.terminate();
      }),
    );
  }

  private dispatch(slot: Slot, task: Task): void {
    if (task.onAbort) task.signal?.removeEventListener('abort', task.onAbort);
    slot.task = task;
    slot.pendingId = task.job.id;
    slot.worker ??= this.spawn(slot);
    task.onAbort = () => this.stop(slot, task);
    task.signal?.addEventListener('abort', task.onAbort, { once: true });
    slot.worker.postMessage(task.job);
  }

  private spawn(slot: Slot): Worker {
    const worker = new Worker(workerScript(), {
      workerData: this.setup,
      stdout: false,
      stderr: false,
      resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB },
    });
    slot.ready = false;
    slot.warming = true;
    worker.on('message', (message: JobResult | LogMessage | ReadyMessage) => {
      if ('log' in message) this.relay(slot, message.log);
      else if (slot.worker !== worker) return;
      else if ('ready' in message) this.warmed(slot);
      else this.finish(slot, message);
    });
    worker.on('error', (error) => this.crashed(slot, worker, error));
    worker.on('exit', (code) => this.crashed(slot, worker, new Error(`search thread exited with code ${code}`)));
    // A thread must not keep the process alive on its own: close() ends them at shutdown. After
    // the listeners: adding a 'message' listener refs the thread again.
    worker.unref();
    worker.postMessage({ warm: true });
    return worker;
  }

  /** A thread's views are built: it takes the next search, and the refresh round goes on. */
  private warmed(slot: Slot): void {
    slot.ready = true;
    slot.failures = 0;
    slot.warming = false;
    this.settleStart(slot);
    if (!slot.task && slot.pendingId === undefined) this.next(slot);
    this.refreshNext();
  }

  /** Takes the slot's task off it, so that it is settled exactly once. */
  private settle(slot: Slot): Task | undefined {
    const task = slot.task;
    slot.task = undefined;
    if (task?.onAbort) task.signal?.removeEventListener('abort', task.onAbort);
    return task;
  }

  private finish(slot: Slot, result: JobResult): void {
    if (slot.pendingId !== result.id) return;
    slot.pendingId = undefined;
    if (result.ok) slot.cache = result.cache;
    const task = slot.task?.job.id === result.id ? this.settle(slot) : undefined;
    if (!task) {
      // Its partner was already told it took too long (see stop): nothing to answer.
    } else if (result.ok) {
      task.resolve({ ids: result.ids, total: result.total });
    } else if (result.kind === 'unavailable') {
      task.reject(new ServiceUnavailableError(result.message, result.reason));
    } else {
      task.reject(new Error(`search thread: ${result.reason}`));
    }
    this.next(slot);
  }

  /** The search passed its budget: end its thread (the only way to stop running JS) and replace it. */
  private stop(slot: Slot, task: Task): void {
    if (slot.task !== task) return;
    if (!slot.ready) {
      // A fresh thread still building its views: ending it would only start that over (and
      // again for the next search, which would time out the same way). The partner gets the
      // refusal; the thread finishes, and takes the next search when it is done.
      this.settle(slot);
      task.reject(task.signal!.reason);
      return;
    }
    const worker = slot.worker;
    slot.pendingId = undefined;
    slot.worker = undefined;
    slot.cache = NO_CACHE;
    this.replaced += 1;
    this.settle(slot);
    task.reject(task.signal!.reason);
    void worker?.terminate();
    this.logger.warn({ search: 'sqlite', thread: slot.index, q: task.job.q.slice(0, 100) }, 'search stopped at its time budget; thread replaced');
    if (!this.closed) slot.worker = this.spawn(slot);
    this.next(slot);
  }

  private crashed(slot: Slot, worker: Worker, error: Error): void {
    if (slot.worker !== worker || this.closed) return;
    slot.worker = undefined;
    slot.pendingId = undefined;
    slot.ready = false;
    slot.warming = false;
    slot.cache = NO_CACHE;
    this.logger.error({ search: 'sqlite', thread: slot.index, err: error }, 'search thread failed; starting a new one');
    this.settleStart(slot);
    // The engine could not answer (the contract's 503), not a fault in the request.
    this.settle(slot)?.reject(new ServiceUnavailableError('Search is unavailable right now; please retry.', `search thread failed: ${error.message}`));
    // Started ahead of searches (start()): its replacement too, after a pause that doubles with
    // each failure in a row (a thread that cannot start, or dies building its views, would
    // otherwise be restarted in a tight loop, logging each time). A search that comes first
    // starts it at once, as without start().
    slot.failures += 1;
    if (this.refreshing && this.waiting.length === 0) {
      const pause = Math.min(RESPAWN_MAX_MS, RESPAWN_FIRST_MS * 2 ** (slot.failures - 1));
      clearTimeout(slot.respawn);
      slot.respawn = setTimeout(() => {
        slot.respawn = undefined;
        if (!this.closed && !slot.worker) slot.worker = this.spawn(slot);
      }, pause).unref();
    }
    this.next(slot);
    this.refreshNext();
  }

  private next(slot: Slot): void {
    const task = this.waiting.shift();
    if (task) this.dispatch(slot, task);
  }

  private relay(slot: Slot, line: string): void {
    try {
      const { level, msg, time: _time, pid: _pid, ...rest } = JSON.parse(line) as Record<string, unknown>;
      const label = this.logger.levels.labels[Number(level)] ?? 'info';
      (this.logger as unknown as Record<string, (o: object, m?: string) => void>)[label]?.call(this.logger, { ...rest, thread: slot.index }, String(msg ?? ''));
    } catch {
      // Not a log line of ours: nothing to relay.
    }
  }
}
