import { describe, expect, it } from 'vitest';
import type { SyncKind, SyncSummary } from '../../../sync/run-sync.js';
import { SyncScheduler } from '../../../sync/scheduler.js';
import { memoryLogger } from '../../support/api.js';
import { parsedLogs } from '../../support/worker.js';

type Requested = SyncKind | 'auto';

/** Fake runs that end when the test says so, and a record of what ran and how many at once. */
function fakeRuns() {
  const started: Requested[] = [];
  const pending: Array<{ kind: Requested; finish: () => void; crash: (error: Error) => void }> = [];
  let running = 0;
  let maxRunning = 0;
  const run = (kind: Requested): Promise<SyncSummary> => {
    started.push(kind);
    running += 1;
    maxRunning = Math.max(maxRunning, running);
    return new Promise<SyncSummary>((resolve, reject) => {
      pending.push({
        kind,
        finish: () => {
          running -= 1;
          resolve({ kind, status: 'succeeded' } as SyncSummary);
        },
        crash: (error) => {
          running -= 1;
          reject(error);
        },
      });
    });
  };
  return {
    run,
    started,
    get running() {
      return running;
    },
    get maxRunning() {
      return maxRunning;
    },
    /** Ends the oldest unfinished run and lets the scheduler react. */
    async finishCurrent(): Promise<void> {
      const current = pending.shift();
      if (!current) throw new Error('no run in progress');
      current.finish();
      await settle();
    },
    async crashCurrent(error: Error): Promise<void> {
      pending.shift()!.crash(error);
      await settle();
    },
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

function setup() {
  const runs = fakeRuns();
  const { logger, lines } = memoryLogger('debug');
  const scheduler = new SyncScheduler(runs.run, logger);
  const logs = () => parsedLogs(lines);
  return { runs, scheduler, logs };
}

describe('SyncScheduler', () => {
  it('never runs two syncs at once: ticks during a run are skipped and logged', async () => {
    const { runs, scheduler, logs } = setup();
    scheduler.request('incremental');
    scheduler.request('incremental');
    scheduler.request('auto');
    expect(runs.started).toEqual(['incremental']);
    expect(scheduler.busy).toBe(true);

    await runs.finishCurrent();
    expect(scheduler.busy).toBe(false);
    scheduler.request('incremental');

    expect(runs.started).toEqual(['incremental', 'incremental']);
    expect(runs.maxRunning).toBe(1);
    const skipped = logs().filter((l) => l.msg === 'skipped a scheduled sync: the previous run is still going');
    expect(skipped).toMatchObject([
      { level: 40, requested: 'incremental', running: 'incremental' },
      { level: 40, requested: 'auto', running: 'incremental' },
    ]);
    await runs.finishCurrent();
  });

  it('skips a full tick that arrives during a full run', async () => {
    const { runs, scheduler, logs } = setup();
    scheduler.request('full');
    scheduler.request('full');
    await runs.finishCurrent();

    expect(runs.started).toEqual(['full']);
    expect(scheduler.busy).toBe(false);
    expect(logs().filter((l) => l.msg?.toString().startsWith('skipped'))).toMatchObject([{ requested: 'full', running: 'full' }]);
  });

  it('queues a full sync arriving during an incremental run, once, and starts it when that run ends', async () => {
    const { runs, scheduler, logs } = setup();
    scheduler.request('incremental');
    scheduler.request('full');
    scheduler.request('full');
    scheduler.request('incremental');
    expect(runs.started).toEqual(['incremental']);

    await runs.finishCurrent();
    expect(runs.started).toEqual(['incremental', 'full']);
    expect(scheduler.busy).toBe(true);
    await runs.finishCurrent();

    expect(runs.started).toEqual(['incremental', 'full']);
    expect(runs.maxRunning).toBe(1);
    expect(logs().filter((l) => l.msg === 'full sync due: it will start when the current run ends')).toHaveLength(1);
  });

  it('keeps going after a run that crashed, and logs the crash', async () => {
    const { runs, scheduler, logs } = setup();
    scheduler.request('incremental');
    await runs.crashCurrent(new Error('disk on fire'));

    expect(scheduler.busy).toBe(false);
    expect(logs().find((l) => l.msg === 'sync crashed')).toMatchObject({ level: 50, err: { message: 'disk on fire' } });
    scheduler.request('incremental');
    expect(runs.started).toEqual(['incremental', 'incremental']);
    await runs.finishCurrent();
  });

  it('stop() waits for the run in progress, drops a queued full sync and refuses new requests', async () => {
    const { runs, scheduler } = setup();
    scheduler.request('incremental');
    scheduler.request('full');
    let stopped = false;
    const stopping = scheduler.stop().then(() => {
      stopped = true;
    });
    await settle();
    expect(stopped).toBe(false);
    scheduler.request('incremental');

    await runs.finishCurrent();
    await stopping;

    expect(stopped).toBe(true);
    expect(runs.started).toEqual(['incremental']);
    expect(runs.running).toBe(0);
    scheduler.request('full');
    expect(runs.started).toEqual(['incremental']);
  });

  it('stop() resolves at once when nothing runs', async () => {
    const { runs, scheduler } = setup();
    await scheduler.stop();
    scheduler.request('auto');
    expect(runs.started).toEqual([]);
  });
});
