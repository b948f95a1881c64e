import cron, { type ScheduledTask } from 'node-cron';
import { UsageError } from '../src/errors.js';
import type { Logger } from '../src/logger.js';
import type { SyncKind, SyncSummary } from './run-sync.js';

type Requested = SyncKind | 'auto';

/**
 * Runs syncs one at a time. A tick that arrives while a run is going is skipped and logged,
 * except a full reconcile arriving during an incremental run: that one waits for its turn,
 * otherwise schedules that coincide (every 5 minutes and every hour) would starve it. A CMS
 * webhook (`triggered`) is never dropped: during a run it queues one incremental run after it.
 */
export class SyncScheduler {
  private current: Promise<void> | undefined;
  private currentKind: Requested | undefined;
  private fullPending = false;
  private incrementalPending = false;
  private stopped = false;

  constructor(
    private readonly run: (kind: Requested) => Promise<SyncSummary>,
    private readonly logger: Logger,
  ) {}

  request(kind: Requested): void {
    if (this.stopped) return;
    if (this.current) {
      if (kind === 'full' && this.currentKind !== 'full' && !this.fullPending) {
        this.fullPending = true;
        this.logger.info({ running: this.currentKind }, 'full sync due: it will start when the current run ends');
      } else {
        this.logger.warn({ requested: kind, running: this.currentKind }, 'skipped a scheduled sync: the previous run is still going');
      }
      return;
    }
    this.currentKind = kind;
    // Any run starting now reads the CMS after every webhook received so far.
    this.incrementalPending = false;
    this.current = this.run(kind)
      .then(() => undefined)
      .catch((error: unknown) => {
        // A run that could not even be recorded (a full or read-only disk) says why in one line;
        // anything else is a bug, logged with its stack.
        if (error instanceof UsageError) this.logger.error({ reason: error.message }, `sync failed: ${error.message}`);
        else this.logger.error({ err: error }, 'sync crashed');
      })
      .finally(() => {
        this.current = undefined;
        this.currentKind = undefined;
        if (this.fullPending) {
          this.fullPending = false;
          this.request('full');
        } else if (this.incrementalPending) {
          this.request('incremental');
        }
      });
  }

  /**
   * A change was announced (a CMS webhook): an incremental sync starts now, or, when a run is
   * going (which may have read the CMS before the change), right after it. Any number of
   * calls during one run queue a single follow-up.
   */
  triggered(): 'started' | 'queued' {
    if (this.stopped) return 'queued';
    if (!this.current) {
      this.request('incremental');
      return 'started';
    }
    this.incrementalPending = true;
    return 'queued';
  }

  get busy(): boolean {
    return this.current !== undefined;
  }

  /** Stops taking requests and resolves when the run in progress, if any, has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.fullPending = false;
    this.incrementalPending = false;
    while (this.current) await this.current;
  }
}

/**
 * The cron ticks of the long-lived worker. node-cron 4 drops a tick that fires more than
 * about a second late (its missedExecutionTolerance), with only a console warning: a full
 * reconcile whose tick lands while a long synchronous apply holds the event loop would be
 * skipped until the next one (an hour by default). A missed tick is therefore requested as
 * soon as node-cron notices it, which is right after the event loop is free again: the
 * scheduler then starts it, queues it (a full one during an incremental run) or skips it as
 * it does any tick.
 */
export function scheduleSyncs(
  scheduler: Pick<SyncScheduler, 'request'>,
  schedule: { incremental: string; full: string },
  logger: Logger,
): ScheduledTask[] {
  return (['incremental', 'full'] as const).map((kind) => {
    const task = cron.schedule(schedule[kind], () => scheduler.request(kind), { name: `${kind} sync` });
    // A listener also replaces node-cron's console.warn with a line in the worker's own log.
    task.on('execution:missed', (context) => {
      logger.warn({ kind, due: context.date.toISOString() }, `missed a scheduled ${kind} sync (the process was busy): requesting it now`);
      scheduler.request(kind);
    });
    return task;
  });
}
