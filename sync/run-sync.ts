import { hostname } from 'node:os';
import type { Db } from '../src/db/connection.js';
import { snapshotStates } from '../src/db/content.js';
import { truncateWal } from '../src/db/wal.js';
import {
  closeAbandonedRuns,
  finishRun,
  getWorkerState,
  lastSuccessfulCmsRun,
  setWorkerState,
  startRun,
  type SyncRunCounts,
} from '../src/db/sync-runs.js';
import { LOCALES, type Locale } from '../src/locale.js';
import type { Logger } from '../src/logger.js';
import type { SearchIndexer } from '../src/search/indexer.js';
import { formatUtcSeconds, parseIsoToMs, type Clock } from '../src/time.js';
import { applyStaged, type LocaleInput } from './apply.js';
import type { CmsAdapter } from './cms/types.js';
import { changedDuringListing, stageListing } from './listing.js';
import { progressReporter } from './progress.js';
import { rebuildEmbeddedIndex } from './reindex.js';
import { Staging } from './staging.js';

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
}

export interface SyncSummary extends SyncRunCounts {
  runId: number;
  kind: SyncKind;
  status: 'succeeded' | 'failed';
  error: string | null;
  warnings: string[];
  durationMs: number;
}

// Listings re-read when the CMS changed under us, before giving up on proving deletions.
const MAX_LISTING_ATTEMPTS = 3;
const SEARCH_REBUILD_NEEDED = 'search_rebuild_needed';

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
  closeAbandonedRuns(db, host, (pid) => (pid === process.pid ? runsInProgress > 0 : isAlive(pid)), startedAt);
  const runId = startRun(db, { kind, startedAt, pid: process.pid, host });
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
  const counts: SyncRunCounts = { fetched: 0, upserted: 0, removed: 0, rejected: 0 };
  const warnings: string[] = [];
  const log = logger.child({ runId, kind });
  log.info(`${kind} sync started`);

  let error: string | null = null;
  const progress = { applied: false };
  try {
    if (kind === 'reindex') {
      await reindex(deps, log);
    } else {
      await syncFromCms(deps, kind, counts, warnings, log, progress);
    }
  } catch (failure) {
    error = describeFailure(failure, deps.signal, progress.applied);
  }

  const status = error === null ? 'succeeded' : 'failed';
  finishRun(db, runId, { ...counts, status, finishedAt: formatUtcSeconds(clock()), error });
  log.info({ wal: truncateWal(db) }, 'checkpointed the write-ahead log');
  const durationMs = clock() - started;
  if (error === null) log.info({ ...counts, durationMs, warnings }, `${kind} sync succeeded`);
  else log.error({ ...counts, durationMs, error }, `${kind} sync failed: ${error}`);
  return { runId, kind, status, error, warnings, durationMs, ...counts };
}

async function syncFromCms(
  deps: SyncDeps,
  kind: 'full' | 'incremental',
  counts: SyncRunCounts,
  warnings: string[],
  log: Logger,
  progress: { applied: boolean },
): Promise<void> {
  const { db, cms, signal } = deps;
  if (!cms) throw new Error('no CMS configured (set CMS_BASE_URL)');
  const since = kind === 'incremental' ? incrementalSince(db, deps.overlapSeconds) : undefined;
  const staging = new Staging(db);
  staging.clear();

  const inputs: LocaleInput[] = [];
  for (const locale of LOCALES) {
    const { sections, rejected: badSections } = await cms.listSections(locale, signal);
    for (const r of badSections) {
      log.warn({ locale, cmsId: r.cmsId, reason: r.reason }, `rejected CMS section ${r.cmsId ?? '(unreadable id)'}: ${r.reason}`);
    }
    counts.rejected += badSections.length;

    const readStarted = performance.now();
    const onPage = progressReporter(log, deps.showProgress ?? false, `${kind} ${locale}`);
    let rejected = new Set<string>();
    let provable = true;
    for (let attempt = 1; ; attempt += 1) {
      // A read again stands alone: a record an earlier read staged may since have been
      // unpublished or deleted, and must not be kept (or inserted) on the strength of it.
      if (attempt > 1) {
        staging.clearLocale(locale);
        rejected = new Set();
        provable = true;
      }
      // Changes since a little before the listing began reveal what moved while it was read.
      const listingStart = formatUtcSeconds(deps.clock() - deps.overlapSeconds * 1000);
      const listing = await stageListing(
        cms,
        staging,
        { locale, perPage: deps.pageSize, publishedOnly: kind === 'full', updatedSince: since },
        { signal, logger: log, onPage },
      );
      for (const r of listing.rejected) rejected.add(r);
      if (listing.rejectedWithoutId) provable = false;
      // A full listing decides what to remove: check that nothing slipped between its pages.
      const stable =
        listing.stable &&
        (kind === 'incremental' ||
          !(await changedDuringListing(cms, staging, { locale, perPage: deps.pageSize, since: listingStart }, signal)));
      if (stable) break;
      if (attempt === MAX_LISTING_ATTEMPTS) {
        provable = false;
        warnings.push(`${locale}: the CMS kept changing while it was read; nothing was removed this run`);
        break;
      }
      log.warn({ locale, attempt }, 'the CMS changed while it was read; reading the listing again');
    }
    if (kind === 'full' && !provable && !warnings.some((w) => w.startsWith(`${locale}:`))) {
      warnings.push(`${locale}: a record without a readable id was rejected; nothing was removed this run`);
    }
    const staged = staging.count(locale);
    log.info({ locale, records: staged, ms: Math.round(performance.now() - readStarted) }, `read ${staged} ${locale} records from the CMS`);
    counts.fetched += staged;
    counts.rejected += rejected.size;
    inputs.push({ locale, sections, mode: kind, removeMissing: provable, keepSections: badSections.length > 0 });
  }

  signal?.throwIfAborted();
  const applyStarted = performance.now();
  const outcomes = applyStaged(db, staging, inputs, formatUtcSeconds(deps.clock()));
  progress.applied = true;
  log.info({ ms: Math.round(performance.now() - applyStarted) }, 'applied to the snapshot in one transaction');
  staging.clear();
  for (const outcome of outcomes.values()) {
    counts.upserted += outcome.upserted;
    counts.removed += outcome.removed;
  }

  if (deps.indexer) {
    await updateSearchIndex(deps, deps.indexer, kind, outcomes, log);
  }
}

async function updateSearchIndex(
  deps: SyncDeps,
  indexer: SearchIndexer,
  kind: 'full' | 'incremental',
  outcomes: Map<Locale, { upsertedIds: number[]; removedIds: number[] }>,
  log: Logger,
): Promise<void> {
  const { db, clock } = deps;
  const needsRebuild = kind === 'full' || getWorkerState(db, SEARCH_REBUILD_NEEDED) !== undefined;
  // Flag first: if this process dies or the index fails half-way, the next run rebuilds.
  setWorkerState(db, SEARCH_REBUILD_NEEDED, 'pending', formatUtcSeconds(clock()));
  try {
    if (needsRebuild) {
      const { documents } = await indexer.rebuild(db, deps.signal, outcomes);
      log.info({ documents, indexer: indexer.name }, 'search index rebuilt');
    } else {
      await indexer.update(db, outcomes, deps.signal);
    }
  } catch (error) {
    throw new Error(`search index (${indexer.name}) not updated, it will be rebuilt on the next run: ${(error as Error).message}`);
  }
  setWorkerState(db, SEARCH_REBUILD_NEEDED, undefined, formatUtcSeconds(clock()));
}

async function reindex(deps: SyncDeps, log: Logger): Promise<void> {
  const documents = rebuildEmbeddedIndex(deps.db, formatUtcSeconds(deps.clock()));
  log.info({ documents }, 'embedded search index rebuilt');
  if (deps.indexer) {
    const { documents: sent } = await deps.indexer.rebuild(deps.db, deps.signal);
    setWorkerState(deps.db, SEARCH_REBUILD_NEEDED, undefined, formatUtcSeconds(deps.clock()));
    log.info({ documents: sent, indexer: deps.indexer.name }, 'search index rebuilt');
  }
}

/** Changes since the last successful CMS sync began, with an overlap for clock skew and slow commits. */
function incrementalSince(db: Db, overlapSeconds: number): string | undefined {
  const last = lastSuccessfulCmsRun(db);
  const startedMs = last ? parseIsoToMs(last.startedAt) : undefined;
  return startedMs === undefined ? undefined : formatUtcSeconds(startedMs - overlapSeconds * 1000);
}

function describeFailure(failure: unknown, signal: AbortSignal | undefined, applied: boolean): string {
  if (signal?.aborted) {
    return applied
      ? 'stopped after the snapshot was updated, before the search index was; the next run rebuilds it'
      : 'stopped before completion; nothing from this run was applied';
  }
  const message = failure instanceof Error ? failure.message : String(failure);
  return message.split('\n')[0] ?? 'unknown error';
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
