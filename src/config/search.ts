import { availableParallelism } from 'node:os';
import { ConfigError } from '../errors.js';
import { int, optional } from './fields.js';

/* Which search engine (API and worker), and how the API runs searches. */

export interface SearchConfig {
  engine: 'sqlite' | 'meilisearch';
  /**
   * `apiKey` is the key of the process reading the config: MEILI_SEARCH_KEY for the API,
   * MEILI_ADMIN_KEY for the worker, MEILI_API_KEY when those are unset. `timeoutMs` is per
   * request: MEILI_TIMEOUT_MS for the API, MEILI_WORKER_TIMEOUT_MS for the worker.
   */
  meilisearch?: { host: string; apiKey: string | undefined; indexPrefix: string; timeoutMs: number };
}

interface MeiliValues {
  SEARCH_ENGINE?: 'sqlite' | 'meilisearch';
  MEILI_HOST?: string;
  MEILI_API_KEY?: string;
  MEILI_INDEX_PREFIX: string;
}

export function searchConfig(values: MeiliValues, apiKey: string | undefined, timeoutMs: number): SearchConfig {
  const engine = values.SEARCH_ENGINE ?? (values.MEILI_HOST ? 'meilisearch' : 'sqlite');
  if (engine === 'sqlite') return { engine };
  if (!values.MEILI_HOST) {
    throw new ConfigError('Invalid configuration: MEILI_HOST is required when SEARCH_ENGINE is "meilisearch"');
  }
  return {
    engine,
    meilisearch: {
      host: values.MEILI_HOST,
      apiKey: apiKey ?? values.MEILI_API_KEY,
      indexPrefix: values.MEILI_INDEX_PREFIX,
      timeoutMs,
    },
  };
}

/** SEARCH_RANK_ALL_MAX's default; the engine outside the API's pool (tests, tools) uses it too. */
export const DEFAULT_RANK_ALL_MAX = 2_000;
/** SEARCH_COMMON_MIN's default, also what the engine uses outside the API's pool. */
export const DEFAULT_COMMON_MIN = 2_000;

export const searchRuntime = {
  SEARCH_WORKERS: optional(int(1, 256)),
  SEARCH_CONCURRENCY: optional(int(1, 1_024)),
  SEARCH_QUEUE: optional(int(0, 10_000)),
  SEARCH_TIMEOUT_MS: optional(int(50, 600_000)).default(2_000),
  SEARCH_MAX_WAIT_MS: optional(int(0, 600_000)).default(250),
  SEARCH_RANK_ALL_MAX: optional(int(4, 10_000_000)).default(DEFAULT_RANK_ALL_MAX),
  SEARCH_COMMON_MIN: optional(int(1, 10_000_000)).default(DEFAULT_COMMON_MIN),
  SEARCH_TERM_CACHE_MB: optional(int(0, 1_024)).default(8),
  SEARCH_WORKER_NICE: optional(int(0, 19)).default(10),
};

/** How the API runs searches: the worker pool of the embedded engine and admission control. */
export interface SearchRuntimeConfig {
  /** Worker threads of the embedded engine (default: cores per process, less one for the main thread). */
  workers: number;
  /** Searches running at once, all partners together. */
  concurrency: number;
  /** Places for searches waiting for a slot, all keys together; when full, the longest queue's newest is refused. */
  queue: number;
  /** Longest a search may wait for a slot, expected at arrival or seen; past it, search_busy. */
  maxWaitMs: number;
  /** Longest a search may take, waiting included; past it, search_busy (and its worker is replaced). */
  timeoutMs: number;
  /** Up to this many exposed matches, every match is ranked by relevance; past it, see docs/search.md. */
  rankAllMax: number;
  /** A word in at least this many articles is common: not scored by the index (see src/search/sqlite/sqlite-rank.ts). */
  commonMin: number;
  /** Bytes of per-word id lists each search thread keeps (src/search/sqlite/term-sets.ts). */
  termBytesPerWorker: number;
  /** Niceness of the search threads: lists and /health keep the CPU when searches compete. */
  workerNice: number;
  /** Bytes of ranked results each search thread may keep (its share of CACHE_MB). */
  cacheBytesPerWorker: number;
}

/**
 * Splits the one cache budget (CACHE_MB): a quarter for the search threads' ranked results, the
 * rest for serialized responses. Every cache counts its keys and per-entry overhead.
 */
export function cacheBudget(total: number): { response: number; search: number } {
  const search = Math.floor(total / 4);
  return { response: total - search, search };
}

export function searchRuntimeConfig(
  v: { SEARCH_WORKERS?: number; SEARCH_CONCURRENCY?: number; SEARCH_QUEUE?: number; SEARCH_MAX_WAIT_MS: number; SEARCH_TIMEOUT_MS: number; SEARCH_RANK_ALL_MAX: number; SEARCH_COMMON_MIN: number; SEARCH_TERM_CACHE_MB: number; SEARCH_WORKER_NICE: number },
  engine: SearchConfig['engine'],
  searchCacheBytes: number,
  processes: number,
): SearchRuntimeConfig {
  const cores = availableParallelism();
  // One search thread per core beside each process's main thread (which serves HTTP and needs a
  // core of its own under load), at least one: every thread is started with its process and
  // holds its own V8 heap, views and connection (about 65 MB each on 110,000 articles), so on a
  // two-core host a second thread would take the API past 256 MB after start (decision 0071).
  const workers = v.SEARCH_WORKERS ?? Math.max(1, Math.floor(cores / processes) - 1);
  // The embedded engine can run no more searches than it has threads; Meilisearch is another
  // server with its own threads, so more requests may wait on it at once.
  const concurrency = v.SEARCH_CONCURRENCY ?? (engine === 'sqlite' ? workers : 4 * cores);
  return {
    workers,
    concurrency,
    // The wait is bounded in time (maxWaitMs); places only bound the memory of waiting
    // requests, so enough of them that a lone partner's burst is refused by time, not count.
    queue: v.SEARCH_QUEUE ?? 64 * concurrency,
    maxWaitMs: v.SEARCH_MAX_WAIT_MS,
    timeoutMs: v.SEARCH_TIMEOUT_MS,
    rankAllMax: v.SEARCH_RANK_ALL_MAX,
    commonMin: v.SEARCH_COMMON_MIN,
    termBytesPerWorker: v.SEARCH_TERM_CACHE_MB * 1024 * 1024,
    workerNice: v.SEARCH_WORKER_NICE,
    cacheBytesPerWorker: Math.floor(searchCacheBytes / workers),
  };
}
