import { DEFAULT_COMMON_MIN, DEFAULT_RANK_ALL_MAX } from '../../config/search.js';
import type { Db } from '../../db/sqlite/connection.js';
import type { StoreSession } from '../../db/snapshot/snapshot-store.js';
import { entryBytes, Lru } from '../../lib/lru.js';
import type { EngineHealth, ExposureIndex, SearchEngine, SearchOrder, SearchPage, SearchQuery } from '../engine.js';
import { normalizeQuery } from '../normalize.js';
import { matchesByTime, rankMatches } from './sqlite-rank.js';
import { TermSets } from './term-sets.js';
import { commonWords } from './common-lists.js';
import { dataVersion } from './fts-table.js';

export interface RankedSearchOptions {
  /** Bytes of ranked id lists kept across queries (paging through results costs one ranking). */
  cacheBytes: number;
  /** See rankMatches: up to this many matches, all are ranked by relevance. */
  rankAllMax: number;
  /** See rankMatches: a word in at least this many articles is not scored by the index. */
  commonMin: number;
  /** Bytes of per-word id lists kept across queries (src/search/sqlite/term-sets.ts). */
  termBytes: number;
  /** Ids of each ranking kept in the cache (KEPT_IDS; smaller in tests, to page past them). */
  keptIds?: number;
}

/** For the engine outside the API's pool (tests, tools); the API sizes its threads' caches from CACHE_MB. */
export const DEFAULT_RANKED_OPTIONS: RankedSearchOptions = {
  cacheBytes: 8 * 1024 * 1024,
  rankAllMax: DEFAULT_RANK_ALL_MAX,
  commonMin: DEFAULT_COMMON_MIN,
  termBytes: 16 * 1024 * 1024,
};

/**
 * How many ids of a ranking are kept per query: its first 50 pages of 20. A query of common
 * words matches 40,000-80,000 articles; a new array of all of them per query (160-320 KB, off
 * V8's heap, but counted against its limits), kept in the cache, made V8 collect the thread's
 * whole heap every 80-90 queries (7 mark-compacts of up to 14 ms in 600 distinct queries; 1
 * with this), and 17 ms once during the first searches after a start. A page past the kept
 * ids is ranked again (one ranking, as a cache miss costs).
 */
export const KEPT_IDS = 1_000;

/** A ranking as kept: its first ids (at least KEPT_IDS, or all) and how many it has in all. */
interface RankedIds {
  ids: Int32Array;
  total: number;
}

/**
 * Ranked results of one query at one content version, kept in a byte-bounded cache. The key
 * holds everything that changes the list: content tag (locale, version, scheduled articles
 * now visible), the section asked for (absent and empty are different), the normalized words.
 */
export class RankedSearch {
  private readonly ranked: Lru<RankedIds>;
  private readonly terms: TermSets;
  /** Where every ranking is written (a thread ranks one query at a time), grown by doubling. */
  private scratch = new Int32Array(0);
  private readonly into = (length: number): Int32Array => {
    if (this.scratch.length < length) this.scratch = new Int32Array(Math.max(length, 2 * this.scratch.length));
    return this.scratch.subarray(0, length);
  };

  constructor(private readonly options: RankedSearchOptions) {
    this.ranked = new Lru(options.cacheBytes);
    this.terms = new TermSets(options.termBytes);
  }

  page(
    db: Db,
    q: {
      q: string;
      section: string | undefined;
      within?: readonly string[] | undefined;
      contentTag: string;
      page: number;
      limit: number;
      publishedAfterMs?: number | undefined;
      publishedBeforeMs?: number | undefined;
      order?: SearchOrder | undefined;
    },
    exposure: ExposureIndex,
  ): SearchPage {
    const { words } = normalizeQuery(q.q);
    if (words.length === 0) return { ids: [], total: 0 };
    const order = q.order ?? 'relevance';
    // The bounds, the order and a key's scope change the list: they are in the key (the exposure
    // holds the bounds and the scope; no scope: as before scopes).
    const parts: unknown[] = [q.contentTag, q.section ?? null, words, q.publishedAfterMs ?? null, q.publishedBeforeMs ?? null, order];
    if (q.within !== undefined) parts.push(q.within);
    const key = JSON.stringify(parts);
    const from = (q.page - 1) * q.limit;
    let kept = this.ranked.get(key);
    // A page past the kept prefix is ranked again, and the longer prefix kept.
    if (!kept || (from + q.limit > kept.ids.length && kept.ids.length < kept.total)) {
      const all = order === 'relevance' ? rankMatches(db, words, exposure, this.options, this.terms, this.into) : matchesByTime(db, words, exposure, order, this.terms);
      kept = { ids: all.slice(0, Math.max(this.options.keptIds ?? KEPT_IDS, from + q.limit)), total: all.length };
      // Kept for the pages after this one; a ranking without a next page is not (a repeat of
      // the same page is the response cache's). Never-repeated queries matching one page or
      // none filled this cache to its budget: 20,000 distinct q grew the thread's heap by 47 MB.
      if (all.length > from + q.limit) this.ranked.set(key, kept, entryBytes(key, kept.ids.byteLength));
    }
    return { ids: Array.from(kept.ids.subarray(from, from + q.limit)), total: kept.total };
  }

  /** The most common words the snapshot keeps lists of, most frequent first (common-lists.ts). */
  commonWords(db: Db, limit: number): string[] {
    return commonWords(db, limit);
  }

  /** The snapshot's data version as this connection sees it (changes with every commit). */
  snapshotVersion(db: Db): number {
    return dataVersion(db);
  }

  /**
   * Ranks a query without keeping the result: a thread rehearses a few queries of common words
   * after a start or a sync, so that the first partner's query does not also pay for compiling
   * the ranking code (a cold thread took 2-3 times longer on it).
   */
  rehearse(db: Db, q: string, exposure: ExposureIndex): void {
    rankMatches(db, normalizeQuery(q).words, exposure, this.options, this.terms, this.into);
  }

  clear(): void {
    this.ranked.clear();
    this.terms.clear();
  }

  stats() {
    return this.ranked.stats();
  }

  /** The per-word lists held (TermSets): hits, misses, bytes, entries. */
  termStats() {
    return this.terms.stats();
  }
}

/**
 * The embedded engine run on the calling thread: SQLite FTS5 inside the snapshot, so the
 * service runs with no search server. Every word of the query must match, as a word or the
 * start of one ("las" finds "laser", "激光" finds "激光器"); results are ranked by bm25 with the
 * title weighted most, ties by newest (see rankMatches for very common terms). The API runs
 * the same code in worker threads (src/search/sqlite/pool/); this class serves tests and
 * SEARCH_WORKERS-less embedding.
 */
export class SqliteFtsEngine implements SearchEngine {
  readonly name = 'sqlite' as const;
  readonly followsSnapshot = true;
  private readonly ranked: RankedSearch;

  constructor(options: Partial<RankedSearchOptions> = {}) {
    this.ranked = new RankedSearch({ ...DEFAULT_RANKED_OPTIONS, ...options });
  }

  async search(session: StoreSession, query: SearchQuery): Promise<SearchPage> {
    return this.ranked.page(session.db, query, query.exposure);
  }

  async health(): Promise<EngineHealth> {
    // It lives in the snapshot: it is up exactly when the snapshot is.
    return { engine: this.name, status: 'ok' };
  }

  async close(): Promise<void> {
    this.ranked.clear();
  }

  stats(): Record<string, number> {
    const s = this.ranked.stats();
    return { ranked_cache_hits: s.hits, ranked_cache_misses: s.misses, ranked_cache_bytes: s.bytes, ranked_cache_entries: s.entries };
  }
}
