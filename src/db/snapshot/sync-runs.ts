import { and, desc, eq, ne, sql } from '../sqlite/drizzle.js';
import { writeTransaction, type Db } from '../sqlite/connection.js';
import { syncRuns, workerState, type SyncRunRow } from './schema.js';

export type SyncRunCounts = Pick<SyncRunRow, 'fetched' | 'upserted' | 'removed' | 'rejected'>;

export function startRun(db: Db, run: { kind: string; startedAt: string; pid: number; host: string }): number {
  return writeTransaction(db, () =>
    db.insert(syncRuns).values({ ...run, status: 'running' }).returning({ id: syncRuns.id }).get().id,
  );
}

export function finishRun(
  db: Db,
  id: number,
  result: SyncRunCounts & { status: 'succeeded' | 'failed'; finishedAt: string; error: string | null },
): void {
  writeTransaction(db, () => db.update(syncRuns).set(result).where(eq(syncRuns.id, id)).run());
}

/**
 * Runs left `running` by a process of this host that no longer exists (killed, crashed) are
 * marked failed, so --status and /health tell the truth.
 */
export function closeAbandonedRuns(db: Db, host: string, isAlive: (pid: number) => boolean, nowIso: string): number {
  return writeTransaction(db, () => {
    const stale = db
      .select({ id: syncRuns.id, pid: syncRuns.pid })
      .from(syncRuns)
      .where(and(eq(syncRuns.status, 'running'), eq(syncRuns.host, host)))
      .all()
      .filter((r) => !isAlive(r.pid));
    for (const r of stale) {
      db.update(syncRuns)
        .set({ status: 'failed', finishedAt: nowIso, error: 'interrupted: the worker stopped before the run finished' })
        .where(eq(syncRuns.id, r.id))
        .run();
    }
    return stale.length;
  });
}

/** The last successful run that read the CMS (a reindex does not). */
export function lastSuccessfulCmsRun(db: Db): SyncRunRow | undefined {
  return db
    .select()
    .from(syncRuns)
    .where(and(eq(syncRuns.status, 'succeeded'), sql`${syncRuns.kind} IN ('full', 'incremental')`))
    .orderBy(desc(syncRuns.id))
    .limit(1)
    .get();
}

export function recentRuns(db: Db, limit: number): SyncRunRow[] {
  return db.select().from(syncRuns).orderBy(desc(syncRuns.id)).limit(limit).all();
}

export function getWorkerState(db: Db, key: string): string | undefined {
  return db.select({ value: workerState.value }).from(workerState).where(eq(workerState.key, key)).get()?.value;
}

export function setWorkerState(db: Db, key: string, value: string | undefined, nowIso: string): void {
  writeTransaction(db, () => {
    if (value === undefined) db.delete(workerState).where(eq(workerState.key, key)).run();
    else
      db.insert(workerState)
        .values({ key, value, updatedAt: nowIso })
        .onConflictDoUpdate({ target: workerState.key, set: { value, updatedAt: nowIso } })
        .run();
  });
}

/**
 * The last run that ended, whatever its kind and result, but a successful --reindex: one
 * reads no CMS, so it cannot vouch that content is still coming in, nor hide a failing sync
 * from /health and the alerts. A failed one is a failure like any other.
 */
export function lastAttempt(db: Db): SyncRunRow | undefined {
  return db
    .select()
    .from(syncRuns)
    .where(and(ne(syncRuns.status, 'running'), sql`NOT (${syncRuns.kind} = 'reindex' AND ${syncRuns.status} = 'succeeded')`))
    .orderBy(desc(syncRuns.id))
    .limit(1)
    .get();
}

/**
 * The last failed run among the last 10,000 (about a month of 5-minute runs): sync_runs is
 * not indexed by status, and /health must stay cheap when no run has failed for years.
 */
export function lastFailedRun(db: Db): SyncRunRow | undefined {
  return db
    .select()
    .from(syncRuns)
    .where(and(eq(syncRuns.status, 'failed'), sql`${syncRuns.id} > (SELECT max(id) FROM sync_runs) - 10000`))
    .orderBy(desc(syncRuns.id))
    .limit(1)
    .get();
}
