import { afterEach, describe, expect, it } from 'vitest';
import type { ScheduledTask } from 'node-cron';
import { scheduleSyncs } from '../../../sync/scheduler.js';
import { memoryLogger } from '../../support/api.js';
import { parsedLogs, waitFor } from '../../support/worker.js';

/*
 * node-cron 4 drops a tick that fires more than a second late. The worker's apply is one
 * synchronous transaction: a tick due while it holds the event loop must still be requested.
 * Real node-cron, a seconds field, and the event loop really held for 3.2 s.
 */

let tasks: ScheduledTask[] = [];

afterEach(async () => {
  for (const task of tasks) await task.destroy();
  tasks = [];
});

describe('scheduleSyncs', () => {
  it('requests a sync whose tick came due while the event loop was blocked, and logs it', async () => {
    const { logger, lines } = memoryLogger('info');
    const requested: Array<{ kind: string; at: number }> = [];
    tasks = scheduleSyncs({ request: (kind) => requested.push({ kind, at: Date.now() }) }, { incremental: '0 0 1 1 *', full: '* * * * * *' }, logger);
    await waitFor(() => requested.length > 0, { timeoutMs: 3_000, what: 'a first tick' });

    // A long synchronous apply: at least two ticks come due more than a second before the
    // event loop is free again, so node-cron counts them as missed.
    const blockedAt = Date.now();
    while (Date.now() - blockedAt < 3_200) {
      // busy
    }
    await waitFor(() => lines.some((l) => l.includes('missed a scheduled full sync')), { timeoutMs: 2_000, what: 'the missed tick' });

    const after = requested.filter((r) => r.at >= blockedAt);
    // Without the catch-up only the one tick still within node-cron's tolerance would run.
    expect(after.length).toBeGreaterThanOrEqual(2);
    expect(after.every((r) => r.kind === 'full')).toBe(true);
    expect(parsedLogs(lines).find((l) => String(l.msg).startsWith('missed a scheduled full sync'))).toMatchObject({
      level: 40,
      kind: 'full',
      due: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
  });
});
