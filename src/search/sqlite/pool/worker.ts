import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { SnapshotStore } from '../../../db/snapshot/snapshot-store.js';
import { AppError } from '../../../errors.js';
import { createLogger } from '../../../logger.js';
import { RankedSearch } from '../sqlite-fts.js';
import { LOCALES } from '../../../locale.js';
import type { JobResult, SearchJob, WarmMessage, WorkerSetup } from './protocol.js';
import { SnapshotViews } from './snapshot-views.js';

/*
 * A search thread: its own read-only connection to the snapshot (connections cannot cross
 * threads), opened lazily and reopened when the file changes, exactly as the API's store does;
 * its own view of what is exposed; its own ranked-results cache. It answers one job at a time.
 */

const setup = workerData as WorkerSetup;
const port = parentPort!;

if (setup.nice > 0) {
  try {
    // On Linux the niceness is per thread: this lowers this thread only, so the API's event
    // loop wins the CPU when both want it.
    setPriority(0, setup.nice);
  } catch {
    // Not permitted here: searches then compete with the event loop as equals.
  }
}

const logger = createLogger({ level: setup.logLevel, destination: { write: (line: string) => port.postMessage({ log: line }) } });
// The snapshot's state (unavailable, available again, reopened) is the API's store's to log, once:
// each thread logging it too multiplied every such line by SEARCH_WORKERS. A thread's own
// failure still reaches the partner and the request log through the search that met it.
const store = new SnapshotStore(setup.databasePath, setup.busyTimeoutMs, logger.child({}, { level: 'silent' }));
const views = new SnapshotViews((locale, version, ms) =>
  logger.debug({ locale, version, ms }, `search thread built its view of ${locale} (content version ${version}) in ${ms} ms`),
);
const ranked = new RankedSearch(setup.ranked);

function run(job: SearchJob): JobResult {
  try {
    const session = store.session();
    try {
      const table = views.table(session, job.locale);
      const exposure = table.exposure(job.now, job.section);
      const page = ranked.page(session.db, { ...job, contentTag: table.contentTag(job.now) }, exposure);
      return { id: job.id, ok: true, ids: page.ids, total: page.total, cache: ranked.stats() };
    } catch (error) {
      throw store.failure(error);
    }
  } catch (error) {
    if (error instanceof AppError && error.status === 503) {
      return { id: job.id, ok: false, kind: 'unavailable', message: error.message, reason: (error as { reason?: string }).reason ?? error.message };
    }
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return { id: job.id, ok: false, kind: 'failed', message: 'search failed', reason };
  }
}

/**
 * Builds the views of every locale that changed (asked at start and in the pool's refresh
 * rounds), then precomputes common words for one slice of time; true while words remain.
 */
function warm(): boolean {
  for (const locale of LOCALES) {
    try {
      views.table(store.session(), locale);
    } catch {
      // Nothing to build yet (no snapshot, or this locale not synced): a search will say so.
    }
  }
  try {
    // After a sync (or at start), the common words' lists to precompute (term-sets.ts); a new
    // plan replaces one still going (the snapshot changed again).
    const words = ranked.planCommon(store.session().db);
    if (words.length > 0) precomputing = { started: performance.now(), remaining: [...words], planned: words };
  } catch {
    // The snapshot cannot answer now: searches say so, and the next refresh round plans again.
  }
  return precomputing !== undefined && precomputeSlice();
}

/**
 * The plan under way. It goes on in the pool's refresh rounds, one slice per round and one
 * thread at a time, only while no search waits: searches go to the other threads meanwhile,
 * and with one thread they wait one slice at most.
 */
let precomputing: { started: number; remaining: string[]; planned: string[] } | undefined;
const SLICE_MS = 40;

/** Precomputes common words for SLICE_MS at most; true while words remain. */
function precomputeSlice(): boolean {
  const plan = precomputing!;
  const until = performance.now() + SLICE_MS;
  for (let word = plan.remaining.shift(); word !== undefined; word = plan.remaining.shift()) {
    let read = false;
    try {
      read = ranked.precompute(store.session().db, word);
    } catch {
      // The snapshot cannot answer now: the next refresh round plans again.
    }
    if (!read) {
      // The snapshot changed since the plan (or failed): the next refresh round plans anew.
      precomputing = undefined;
      return false;
    }
    if (plan.remaining.length > 0 && performance.now() >= until) return true;
  }
  rehearse(plan.planned);
  const ms = Math.round(performance.now() - plan.started);
  logger.debug({ words: plan.planned.length, ms, bytes: ranked.termStats().bytes }, `search thread precomputed the lists of ${plan.planned.length} common words in ${ms} ms`);
  precomputing = undefined;
  return false;
}

/** A few queries of two of the most common words in each locale, ranked and dropped (RankedSearch.rehearse). */
function rehearse(words: string[]): void {
  // Common words of the zh locale are Han, of en not: a query of words of the other locale
  // would match nothing there and exercise nothing.
  const han = /\p{Script=Han}/u;
  try {
    const session = store.session();
    for (const locale of LOCALES) {
      const mine = words.filter((w) => han.test(w) === (locale === 'zh')).slice(0, 8);
      const exposure = views.table(session, locale).exposure(Date.now(), undefined);
      for (let i = 0; i + 1 < mine.length; i += 2) ranked.rehearse(session.db, `${mine[i]} ${mine[i + 1]}`, exposure);
    }
  } catch {
    // Only a rehearsal: the snapshot failing now is for the next search to report.
  }
}

port.on('message', (message: SearchJob | WarmMessage) => {
  if ('warm' in message) {
    port.postMessage({ ready: true, precomputing: warm() });
  }
  else port.postMessage(run(message));
});
