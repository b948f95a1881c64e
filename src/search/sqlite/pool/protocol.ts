import type { Locale } from '../../../locale.js';
import type { RankedSearchOptions } from '../sqlite-fts.js';
import type { SearchOrder } from '../../engine.js';

/** What a search thread is started with (workerData). */
export interface WorkerSetup {
  databasePath: string;
  busyTimeoutMs: number;
  ranked: RankedSearchOptions;
  /** Niceness the thread gives itself (0: none). */
  nice: number;
  logLevel: string;
  /**
   * How often the pool asks its idle threads, one at a time, to look for a new snapshot and
   * rebuild their views, so that the first searches after a sync do not wait for that (default
   * 1000 ms; see WorkerPool.start).
   */
  refreshMs?: number;
}

/** One search, as posted to a thread: plain data only (functions cannot cross threads). */
export interface SearchJob {
  id: number;
  locale: Locale;
  q: string;
  section: string | undefined;
  /** The key's scope: only these sections (undefined: all). */
  within?: readonly string[] | undefined;
  page: number;
  limit: number;
  now: number;
  /** The published bounds (epoch ms) and the order, as in SearchQuery (src/search/engine.ts). */
  publishedAfterMs: number | undefined;
  publishedBeforeMs: number | undefined;
  order: SearchOrder;
}

export type JobResult =
  | { id: number; ok: true; ids: number[]; total: number; cache: CacheStats }
  /** `unavailable`: the snapshot cannot answer (a 503); `failed`: a bug (a 500). */
  | { id: number; ok: false; kind: 'unavailable' | 'failed'; message: string; reason: string };

/** A log line written in a thread, relayed to the API's logger. */
export interface LogMessage {
  log: string;
}

export interface CacheStats {
  hits: number;
  misses: number;
  bytes: number;
  entries: number;
}

/** Asks a thread to build its views: a fresh one before its first search, then in refresh rounds. */
export interface WarmMessage {
  warm: true;
}

/** A thread's answer to WarmMessage: its views are built. */
export interface ReadyMessage {
  ready: true;
}
