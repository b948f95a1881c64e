/*
 * One piece on purpose (about 300 lines): one sync run from start to end, in the order a
 * reader follows it (record the run, read each locale from the CMS into staging, apply them in
 * one transaction, follow the search index, finish the run, truncate the WAL), with the failure
 * handling of each step beside the step. What stands alone is in its own file: reading a locale
 * (read-locale.ts), staging (staging.ts), the apply transaction (apply.ts), reindexing
 * (reindex.ts), store failures (snapshot-failure.ts).
 */
import { hostname } from 'node:os';
import { writeTransaction, type Db } from '../src/db/sqlite/connection.js';
import { setFeedPending } from '../src/db/snapshot/feed-write.js';
import { snapshotStates } from '../src/db/snapshot/content.js';
import { truncateWal } from '../src/db/sqlite/wal.js';
import {
  closeAbandonedRuns,
  finishRun,
  getWorkerState,
  lastSuccessfulCmsRun,
  setWorkerState,
  startRun,
  type SyncRunCounts,
} from '../src/db/snapshot/sync-runs.js';
import { LOCALES, type Locale } from '../src/locale.js';
import type { Logger } from '../src/logger.js';
import type { SearchIndexer } from '../src/search/indexer.js';
import { formatUtcSeconds, parseIsoToMs, type Clock } from '../src/lib/time.js';
import { applyStaged, type LocaleInput, type LocaleOutcome } from './apply.js';
import type { CmsAdapter } from './cms/types.js';
import { readLocale } from './read-locale.js';
import { rebuildEmbeddedIndex } from './reindex.js';
import type { ListLimits } from '../src/search/sqlite/common-lists.js';
import { snapshotStoreFailure } from './snapshot-failure.js';
import { Staging } from './staging.js';
import { UsageError } from '../src/errors.js';

export type SyncKind = 'full' | 'incremental' | 'reindex';

export interface SyncDeps {
  db: Db;
  /** Not needed for a reindex. */
  cms?: CmsAdapter;
  logger: Logger;
  clock: Clock;
  pageSize: number;
  overlapSeconds: number;
  indexer?: SearchIndexer;
  signal?: AbortSignal;
  /** Log progress while paging (a person is watching a terminal). */
  showProgress?: boolean;
  /** Deletes older than this leave the change feed (FEED_RETENTION_DAYS); 30 by default. */
  feedRetentionDays?: number;
  /** Champion lists of the embedded engine (SEARCH_LISTS_*); the defaults when absent. */
  searchLists?: ListLimits;
}

export interface SyncSummary extends SyncRunCounts {
  runId: number;
  kind: SyncKind;
  status: 'succeeded' | 'failed';
  error: string | null;
  warnings: string[];
  durationMs: number;
}

const DEFAULT_FEED_RETENTION_DAYS = 30;
/**
 * SQLite's page cache of the snapshot, in KiB (better-sqlite3 builds with 16,000). An incremental
 * sync reads a few hundred pages: 4 MB keeps its peak at 126 MB instead of 134-137 MB
 * (docs/operations.md#the-sync-workers-memory). A full sync keeps 16 MB for its one large
 * transaction, whose speed with less was not measured.
 */
const PAGE_CACHE_KIB = { full: 16_000, incremental: 4_000 } as const;
const SEARCH_REBUILD_NEEDED = 'search_rebuild_needed';
// Set while the last CMS sync's listing did not settle: incremental syncs start no later than it.
const CURSOR_HOLD = 'incremental_cursor_hold';
// The hold when there was no cursor yet: the next incremental sync reads every change.
const EPOCH = '1970-01-01T00:00:00Z';

/** The kind a run should be when none is forced: full until a CMS sync has succeeded. */
export function chooseKind(db: Db): 'full' | 'incremental' {
  const synced = new Set(snapshotStates(db).map((s) => s.locale));
  if (!lastSuccessfulCmsRun(db) || LOCALES.some((l) => !synced.has(l))) return 'full';
  return 'incremental';
}

/**
 * One sync pass, testable without a clock or a schedule: fetch every locale into staging,
 * apply all of it in one transaction, then bring the external search index along. Never
 * throws for a failed run: the failure is recorded in sync_runs and returned.
 */
export async function runSync(deps: SyncDeps, requested: SyncKind | 'auto'): Promise<SyncSummary> {
  const { db, clock } = deps;
  const started = clock();
  const startedAt = formatUtcSeconds(started);
  const kind: SyncKind = requested === 'auto' ? chooseKind(db) : requested;
  const host = hostname();
  // A `running` row with this process's pid while no run of this process is in progress was
  // left by an earlier process that had the same pid: a restarted container's worker always does.
  // The run's first writes: a disk that is full or read-only, or a damaged file, fails here,
  // before there is a run to record the failure in. One line, as for every other failure.
  const runId = storeStep(db, () => {
    closeAbandonedRuns(db, host, (pid) => (pid === process.pid ? runsInProgress > 0 : isAlive(pid)), startedAt);
    return startRun(db, { kind, startedAt, pid: process.pid, host });
  });
  runsInProgress += 1;
  try {
    return await runRecorded(deps, kind, runId, started);
  } finally {
    runsInProgress -= 1;
  }
}

// Runs of this process that have started and not finished yet.
let runsInProgress = 0;

async function runRecorded(deps: SyncDeps, kind: SyncKind, runId: number, started: number): Promise<SyncSummary> {
  const { db, logger, clock } = deps;
  let counts: SyncRunCounts = { fetched: 0, upserted: 0, removed: 0, rejected: 0 };
  let warnings: string[] = [];
  const log = logger.child({ runId, kind });
  log.info(`${kind} sync started`);

  let error: string | null = null;
  let applied = false;
  try {
    if (kind === 'reindex') {
      await reindex(deps, log);
    } else {
      const result = await syncFromCms(deps, kind, log);
      ({ counts, warnings } = result);
      applied = true;
      if (deps.indexer) await updateSearchIndex(deps, deps.indexer, kind, result.outcomes, log);
    }
  } catch (failure) {
    error = describeFailure(failure, deps.signal, applied, db.$client.name);
  }

  const status = error === null ? 'succeeded' : 'failed';
  storeStep(db, () => finishRun(db, runId, { ...counts, status, finishedAt: formatUtcSeconds(clock()), error }), error);
  log.info({ wal: storeStep(db, () => truncateWal(db), error) }, 'checkpointed the write-ahead log');
  const durationMs = clock() - started;
  if (error === null) log.info({ ...counts, durationMs, warnings }, `${kind} sync succeeded`);
  else log.error({ ...counts, durationMs, error }, `${kind} sync failed: ${error}`);
  return { runId, kind, status, error, warnings, durationMs, ...counts };
}

interface CmsSyncResult {
  counts: SyncRunCounts;
  warnings: string[];
  outcomes: Map<Locale, LocaleOutcome>;
}

/** Reads every locale into staging, then applies all of them (and the feed) in one transaction. */
async function syncFromCms(deps: SyncDeps, kind: 'full' | 'incremental', log: Logger): Promise<CmsSyncResult> {
  const { db, cms } = deps;
  if (!cms) throw new Error('no CMS configured (set CMS_BASE_URL)');
  db.$client.pragma(`cache_size = -${PAGE_CACHE_KIB[kind]}`);
  const cursor = incrementalSince(db, deps.overlapSeconds);
  const since = kind === 'incremental' ? cursor : undefined;
  const staging = new Staging(db);
  staging.clear();

  const counts: SyncRunCounts = { fetched: 0, upserted: 0, removed: 0, rejected: 0 };
  const warnings: string[] = [];
  const inputs: LocaleInput[] = [];
  let settled = true;
  for (const locale of LOCALES) {
    const read = await readLocale({ ...deps, cms }, staging, { kind, locale, since, cursor }, log);
    counts.fetched += read.fetched;
    counts.rejected += read.rejected;
    warnings.push(...read.warnings);
    inputs.push(read.input);
    settled &&= read.settled;
  }

  deps.signal?.throwIfAborted();
  const applyStarted = performance.now();
  const outcomes = applyWithFeed(deps, staging, inputs, log);
  const feedMs = [...outcomes.values()].reduce((sum, o) => sum + o.feed.ms, 0);
  log.info({ ms: Math.round(performance.now() - applyStarted), feedMs: Math.round(feedMs) }, 'applied to the snapshot in one transaction');
  staging.clear();
  holdCursor(deps, settled ? undefined : (cursor ?? EPOCH), log);
  for (const outcome of outcomes.values()) {
    counts.upserted += outcome.upserted;
    counts.removed += outcome.removed;
  }
  return { counts, warnings, outcomes };
}

/**
 * The apply transaction, preceded by the change feed's pending mark: committed first, it makes
 * API readers hold scheduled entries back to a time at or before this commit's entries, so a
 * cursor handed out meanwhile can never sort after them (src/content/feed.ts).
 */
function applyWithFeed(deps: SyncDeps, staging: Staging, inputs: LocaleInput[], log: Logger): Map<Locale, LocaleOutcome> {
  const { db, clock } = deps;
  writeTransaction(db, () => setFeedPending(db, clock()));
  try {
    const nowMs = clock();
    return applyStaged(db, staging, inputs, formatUtcSeconds(nowMs), {
      nowMs,
      committingAt: clock,
      feedRetentionMs: (deps.feedRetentionDays ?? DEFAULT_FEED_RETENTION_DAYS) * 86_400_000,
      listLimits: deps.searchLists,
      commonLists: ({ mode, words, bytes, ms }) =>
        log.info({ mode, words, bytes, ms: Math.round(ms) }, mode === 'whole' ? `search lists of ${words} common words recomputed` : `search lists of ${words} common words followed the changes`),
    });
  } catch (error) {
    // Best effort: an expired mark is ignored by readers anyway.
    try {
      writeTransaction(db, () => setFeedPending(db, null));
    } catch {
      // The database itself is failing; the apply's error says why.
    }
    throw error;
  }
}

async function updateSearchIndex(
  deps: SyncDeps,
  indexer: SearchIndexer,
  kind: 'full' | 'incremental',
  outcomes: Map<Locale, LocaleOutcome>,
  log: Logger,
): Promise<void> {
  const { db, clock } = deps;
  const needsRebuild = getWorkerState(db, SEARCH_REBUILD_NEEDED) !== undefined;
  // Flag first: if this process dies or the index fails half-way, the next run rebuilds.
  setWorkerState(db, SEARCH_REBUILD_NEEDED, 'pending', formatUtcSeconds(clock()));
  try {
    if (needsRebuild) {
      const { documents } = await indexer.rebuild(db, deps.signal, outcomes);
      log.info({ documents, indexer: indexer.name }, 'search index rebuilt');
    } else if (kind === 'full') {
      // The exact difference, not a rebuild: the engine re-tokenizes only what changed.
      const { sent, deleted, rebuilt } = await indexer.reconcile(db, outcomes, deps.signal);
      log.info({ sent, deleted, rebuilt, indexer: indexer.name }, 'search index brought to the snapshot');
    } else {
      await indexer.update(db, outcomes, deps.signal);
    }
  } catch (error) {
    throw new Error(`search index (${indexer.name}) not updated, it will be rebuilt on the next run: ${(error as Error).message}`);
  }
  setWorkerState(db, SEARCH_REBUILD_NEEDED, undefined, formatUtcSeconds(clock()));
}

async function reindex(deps: SyncDeps, log: Logger): Promise<void> {
  const documents = rebuildEmbeddedIndex(deps.db, formatUtcSeconds(deps.clock()), deps.searchLists);
  log.info({ documents }, 'embedded search index rebuilt');
  if (deps.indexer) {
    const { documents: sent } = await deps.indexer.rebuild(deps.db, deps.signal);
    setWorkerState(deps.db, SEARCH_REBUILD_NEEDED, undefined, formatUtcSeconds(deps.clock()));
    log.info({ documents: sent, indexer: deps.indexer.name }, 'search index rebuilt');
  }
}

/**
 * Changes since the last successful CMS sync began, with an overlap for clock skew and slow
 * commits; or since the hold, when it is earlier (a listing did not settle since then).
 */
function incrementalSince(db: Db, overlapSeconds: number): string | undefined {
  const last = lastSuccessfulCmsRun(db);
  const startedMs = last ? parseIsoToMs(last.startedAt) : undefined;
  const usual = startedMs === undefined ? undefined : formatUtcSeconds(startedMs - overlapSeconds * 1000);
  const hold = getWorkerState(db, CURSOR_HOLD);
  if (hold === undefined) return usual;
  return usual === undefined || hold < usual ? hold : usual;
}

/**
 * After the apply: a listing that never settled may have skipped a record (a takedown among
 * them), and this run, once recorded as succeeded, would move the cursor past it. So the cursor
 * is held where it was before this run (`hold`: the earlier hold, if any, is in it) until a run
 * whose listings all settle; such a run (undefined) lifts it.
 */
function holdCursor(deps: SyncDeps, hold: string | undefined, log: Logger): void {
  const { db, clock } = deps;
  if (hold === getWorkerState(db, CURSOR_HOLD)) return;
  setWorkerState(db, CURSOR_HOLD, hold, formatUtcSeconds(clock()));
  if (hold === undefined) log.info('every listing settled: the incremental cursor moves on again');
  else log.warn({ hold }, `a listing did not settle: incremental syncs start no later than ${hold} until one settles`);
}

function describeFailure(failure: unknown, signal: AbortSignal | undefined, applied: boolean, path: string): string {
  if (signal?.aborted) {
    return applied
      ? 'stopped after the snapshot was updated, before the search index was; the next run rebuilds it'
      : 'stopped before completion; nothing from this run was applied';
  }
  // The file's or the disk's failure (a damaged page, a full disk), said with what to do.
  const store = snapshotStoreFailure(failure, path);
  if (store !== undefined) return store;
  const message = failure instanceof Error ? failure.message : String(failure);
  return message.split('\n')[0] ?? 'unknown error';
}

/**
 * A write of the run's own bookkeeping (its sync_runs row): a failure of the file or the disk
 * becomes the one line an operator reads (a UsageError: no stack), after the run's own reason
 * when there was one. Anything else is a bug and goes on unchanged.
 */
function storeStep<T>(db: Db, step: () => T, runError: string | null = null): T {
  try {
    return step();
  } catch (error) {
    const line = snapshotStoreFailure(error, db.$client.name);
    if (line === undefined) throw error;
    throw new UsageError(runError === null || runError === line ? line : `${runError}; and the run could not be recorded: ${line}`);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
