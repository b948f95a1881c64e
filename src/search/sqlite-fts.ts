import { ftsMatches } from '../db/fts.js';
import type { StoreSession } from '../db/snapshot-store.js';
import { Lru } from '../lru.js';
import type { EngineHealth, ExposureIndex, SearchEngine, SearchPage, SearchQuery } from './engine.js';
import { normalizeQuery } from './normalize.js';

/** How many result ids the engine keeps across queries (about 4 bytes each). */
const CACHED_IDS = 2_000_000;

/**
 * The embedded engine: SQLite FTS5 inside the snapshot, so the service runs with no search
 * server. Every word of the query must match, as a word or the start of one ("las" finds
 * "laser", "激光" finds "激光器"); results are ranked by bm25 with the title weighted most,
 * ties by newest. The full ranked list of a query is kept per content version, so paging
 * through results costs one ranking.
 */
export class SqliteFtsEngine implements SearchEngine {
  readonly name = 'sqlite' as const;
  readonly followsSnapshot = true;
  private readonly ranked = new Lru<Int32Array>(CACHED_IDS);

  async search(session: StoreSession, query: SearchQuery): Promise<SearchPage> {
    const all = this.rankedIds(session, query);
    const from = (query.page - 1) * query.limit;
    return { ids: Array.from(all.subarray(from, from + query.limit)), total: all.length };
  }

  async health(): Promise<EngineHealth> {
    // It lives in the snapshot: it is up exactly when the snapshot is.
    return { engine: this.name, status: 'ok' };
  }

  async close(): Promise<void> {
    this.ranked.clear();
  }

  private rankedIds(session: StoreSession, query: SearchQuery): Int32Array {
    const match = matchExpression(query.q);
    if (match === undefined) return new Int32Array(0);
    const key = `${query.contentTag}|${query.section ?? ''}|${match}`;
    let ids = this.ranked.get(key);
    if (!ids) {
      ids = rank(ftsMatches(session.db, match), query.exposure);
      this.ranked.set(key, ids, ids.length + 16);
    }
    return ids;
  }
}

/**
 * The FTS5 query for a partner's search term: each word quoted (so no FTS5 syntax can be
 * injected) and used as a prefix, all words required. Undefined when the term has no words.
 */
export function matchExpression(q: string): string | undefined {
  // The normalisation Meilisearch gets too, so that the same q means the same on both.
  const { words } = normalizeQuery(q);
  if (words.length === 0) return undefined;
  return words.map((w) => `"${w.replaceAll('"', '""')}"*`).join(' ');
}

/**
 * Keeps the exposed matches, best score first, ties by partner order (newest, then slug).
 * Typed arrays and an index sort: a term found in half of a 100,000-article corpus ranks in
 * about 20 ms here, where an array of objects took twice that and more garbage.
 */
function rank(matches: Iterable<[number, number]>, exposure: ExposureIndex): Int32Array {
  let ids = new Int32Array(1024);
  let scores = new Float64Array(1024);
  let orders = new Int32Array(1024);
  let n = 0;
  // Streamed from SQLite into typed arrays: a term in half the corpus is 50,000 rows.
  for (const [id, score] of matches) {
    const order = exposure.rank(id);
    if (order < 0) continue;
    if (n === ids.length) {
      ids = grow(ids, new Int32Array(n * 2));
      scores = grow(scores, new Float64Array(n * 2));
      orders = grow(orders, new Int32Array(n * 2));
    }
    ids[n] = id;
    scores[n] = score;
    orders[n] = order;
    n += 1;
  }
  const index = new Uint32Array(n);
  for (let i = 0; i < n; i++) index[i] = i;
  index.sort((a, b) => scores[a]! - scores[b]! || orders[a]! - orders[b]!);
  const ranked = new Int32Array(n);
  for (let i = 0; i < n; i++) ranked[i] = ids[index[i]!]!;
  return ranked;
}

function grow<T extends Int32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
