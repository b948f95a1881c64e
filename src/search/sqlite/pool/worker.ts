import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { SnapshotStore } from '../../../db/snapshot/snapshot-store.js';
import { openReaderFile, type Db, type OpenOptions } from '../../../db/sqlite/sqlite-file.js';
import { AppError } from '../../../errors.js';
import { createLogger } from '../../../logger.js';
import { RankedSearch } from '../sqlite-fts.js';
import { LOCALES, type Locale } from '../../../locale.js';
import type { JobResult, SearchJob, WarmMessage, WorkerSetup } from './protocol.js';
import type { ExposureIndex } from '../../engine.js';
import { collectStartupGarbage } from '../../../lib/startup-collection.js';
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
// A plain connection, without drizzle's query builder: a search thread runs prepared statements
// only, and loading drizzle would cost each thread 0.1 s and 10 MB for nothing (sqlite-file.ts).
const plainReader = (path: string, options: OpenOptions) => ({ $client: openReaderFile(path, options) }) as Db;
const store = new SnapshotStore(setup.databasePath, setup.busyTimeoutMs, logger.child({}, { level: 'silent' }), plainReader);
const views = new SnapshotViews((locale, version, ms) =>
  logger.debug({ locale, version, ms }, `search thread built its view of ${locale} (content version ${version}) in ${ms} ms`),
);
const ranked = new RankedSearch(setup.ranked);

function run(job: SearchJob): JobResult {
  try {
    const session = store.session();
    try {
      const table = views.table(session, job.locale);
      const exposure = table.exposure(job.now, job.section, { afterMs: job.publishedAfterMs, beforeMs: job.publishedBeforeMs }, job.within);
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
 * rounds), and after a start or a sync rehearses a few queries.
 */
function warm(): void {
  for (const locale of LOCALES) {
    try {
      views.table(store.session(), locale);
    } catch {
      // Nothing to build yet (no snapshot, or this locale not synced): a search will say so.
    }
  }
  rehearse();
}

/** The snapshot version last rehearsed on: once per start and per sync. */
let rehearsed = -1;

/**
 * Queries of the most common words of each locale, ranked and dropped (RankedSearch.rehearse):
 * the first partners' queries then do not also pay for compiling the ranking code, and the
 * snapshot's pages they read are in the cache. Both locales, one word and two, and a common word
 * with one of the least common listed ones: ranking a single word, a pair, Latin or Chinese
 * words, bitmaps or id lists each takes its own paths through the code, and a path never run
 * took 2-4 times longer on its first query (`laser` 43 ms in a thread that had only rehearsed
 * English pairs, 22 ms with these; `激光` 23 ms, 5 ms). After the thread's start each query is
 * ranked REHEARSAL_ROUNDS times, the locales in turn: V8 optimizes the ranking code only after
 * it has run a while, and once each left that to the first partners' queries (rankNewest,
 * rankInto, matchBits and intersect compiled while answering them, 4-9 ms each on the core the
 * search shared). After a sync once: the code stays optimized, only the caches are new, and
 * 8 rounds would keep the thread from searches for about 0.7 s after every sync.
 */
function rehearse(): void {
  try {
    const session = store.session();
    const version = ranked.snapshotVersion(session.db);
    if (version === rehearsed) return;
    // After a sync the code is still optimized: one round warms the caches the new snapshot emptied.
    const rounds = rehearsed === -1 ? REHEARSAL_ROUNDS : 1;
    rehearsed = version;
    const started = performance.now();
    // Common words of the zh locale are Han, of en not: a query of words of the other locale
    // would match nothing there and exercise nothing. The list holds every listed word (a few
    // hundred), most common first: zh's words come after dozens of en's.
    const han = /\p{Script=Han}/u;
    const words = ranked.commonWords(session.db, REHEARSAL_WORDS_READ);
    const plans: { exposure: ExposureIndex; asked: string[] }[] = [];
    const queries: Partial<Record<Locale, number>> = {};
    for (const locale of LOCALES) {
      const listed = words.filter((w) => han.test(w) === (locale === 'zh'));
      const mine = listed.slice(0, 10);
      if (mine.length === 0) continue;
      const rarest = listed.length > mine.length ? [listed.at(-1)!, `${mine[0]} ${listed.at(-1)}`] : [];
      const asked = [...mine.slice(0, 4), ...pairsOf(mine.slice(4)), ...rarest];
      plans.push({ exposure: views.table(session, locale).exposure(Date.now(), undefined), asked });
      queries[locale] = asked.length;
    }
    const round = () => {
      for (const { exposure, asked } of plans) for (const q of asked) ranked.rehearse(session.db, q, exposure);
    };
    for (let r = 0; r < rounds; r++) round();
    let afterCollection = 0;
    if (rounds === REHEARSAL_ROUNDS) {
      // After the start's rounds, their garbage goes now rather than during a partner's search.
      collectStartupGarbage();
      // Then one round more: the first rankings after that collection took 3-5 times as long
      // as before it (13-19 ms for words ranked in 3-4 ms in a thread, whatever the words), and
      // the first partner's search paid for it (the bench's first cold query: 29-36 ms, now 16-18).
      round();
      afterCollection = 1;
    }
    logger.debug({ queries, rounds, afterCollection, ms: Math.round(performance.now() - started) }, 'search thread rehearsed common queries');
  } catch {
    // Only a rehearsal: the snapshot failing now is for the next search to report.
  }
}

/** How many of the snapshot's listed words are read to find each locale's most common. */
const REHEARSAL_WORDS_READ = 1_000;
/** How many times each rehearsal query is ranked after the thread's start (see rehearse); once after a sync. */
const REHEARSAL_ROUNDS = 8;

function pairsOf(words: readonly string[]): string[] {
  const pairs: string[] = [];
  for (let i = 0; i + 1 < words.length; i += 2) pairs.push(`${words[i]} ${words[i + 1]}`);
  return pairs;
}

port.on('message', (message: SearchJob | WarmMessage) => {
  if ('warm' in message) {
    warm();
    port.postMessage({ ready: true });
  }
  else port.postMessage(run(message));
});
