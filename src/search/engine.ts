import type { StoreSession } from '../db/snapshot/snapshot-store.js';
import type { ExposureIndex } from '../db/snapshot/locale-exposure.js';
import type { Locale } from '../locale.js';

// The index engines filter and order by; it lives beside the exposure rule it holds in memory.
export type { ExposureIndex } from '../db/snapshot/locale-exposure.js';

export type SearchOrder = 'relevance' | 'newest' | 'oldest';

export interface SearchQuery {
  locale: Locale;
  /** Trimmed, 2 to 200 code points. */
  q: string;
  /** The section asked for, if any (unknown or inactive ones match nothing). */
  section: string | undefined;
  /** Slugs of the locale's active sections: nothing outside them may be returned. */
  activeSections: readonly string[];
  /**
   * The sections of the key's scope, when it has one (already taken out of activeSections
   * and exposure): engines that filter by themselves, or cache, must follow it too.
   */
  within?: readonly string[] | undefined;
  /** Which articles may be returned, and in which partner order (the published bounds included). */
  exposure: ExposureIndex;
  /** published_after (inclusive) and published_before (exclusive), epoch ms: already in `exposure`. */
  publishedAfterMs?: number | undefined;
  publishedBeforeMs?: number | undefined;
  /** `relevance`: most relevant first; `newest`/`oldest`: by publication time, ties by slug. Absent: relevance. */
  order?: SearchOrder | undefined;
  page: number;
  limit: number;
  now: number;
  /** Changes whenever the exposed content of the locale may have changed; a cache key. */
  contentTag: string;
  /** The partner's key id: admission control shares search slots out by key. */
  keyId?: number | undefined;
  /** Aborted when the search passed its time budget: an engine stops working on it. */
  signal?: AbortSignal | undefined;
}

/** Article ids (articles.id) of one page, most relevant first, and the total number of hits. */
export interface SearchPage {
  ids: number[];
  total: number;
}

export interface EngineHealth {
  engine: SearchEngineName;
  status: 'ok' | 'unavailable';
  /** For the operator; never secret. */
  detail?: string;
  /** An external engine's server version; null when its key may not read it. */
  version?: string | null;
  /** An external engine's index per locale. */
  indexes?: Record<string, EngineIndexHealth>;
}

/** One external index: `missing` or `unconfigured` (default settings) fail every search until rebuilt. */
export interface EngineIndexHealth {
  uid: string;
  status: 'ok' | 'missing' | 'unconfigured';
  /** Documents in the index (null when it cannot be searched). */
  documents: number | null;
}

export type SearchEngineName = 'sqlite' | 'meilisearch';

/**
 * A full-text search engine. Engines return ids only; the rows come from the SQLite snapshot
 * (src/content/search.ts), so search and list never disagree and nothing unexposed leaks.
 * A failure of the engine itself is thrown as ServiceUnavailableError (503 on search only).
 */
export interface SearchEngine {
  readonly name: SearchEngineName;
  /** True when results depend on the snapshot alone, so responses can be cached by its version. */
  readonly followsSnapshot: boolean;
  search(session: StoreSession, query: SearchQuery): Promise<SearchPage>;
  health(): Promise<EngineHealth>;
  close(): Promise<void>;
  /** Plain numbers for metrics (admission, pool, caches); engines without any may omit it. */
  stats?(): Record<string, number>;
  /**
   * Starts, ahead of the first search, what the engine runs on (the embedded engine's threads
   * and their views of the snapshot), so that the first partners' searches after a start do not
   * each pay about a second for it. Resolves when that is ready (the API opens its port then).
   * Engines with nothing to start omit it.
   */
  start?(): Promise<void>;
}
