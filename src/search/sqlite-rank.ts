import type { Db } from '../db/connection.js';
import { ftsMatchesFrom, ftsMatchIds } from '../db/fts.js';
import type { ExposureIndex } from './engine.js';
import { wordParts } from './normalize.js';

/**
 * The FTS5 query for normalized words (src/search/normalize.ts): each word quoted, so no FTS5
 * syntax can be injected, and used as a prefix; all words required. A Chinese word indexed as
 * several tokens is a phrase: its tokens in order. Undefined without words.
 */
export function matchFor(words: readonly string[]): string | undefined {
  if (words.length === 0) return undefined;
  return words.map((w) => `"${wordParts(w).join(' ').replaceAll('"', '""')}"*`).join(' ');
}

/**
 * Every exposed match of `words`, best first. The total is always exact: the ids of all
 * matches are read (cheap: no scoring), then filtered by exposure.
 *
 * Up to `rankAllMax` exposed matches, every match is ranked with bm25 (title weighted most),
 * ties by partner order (newest first). Scoring is what costs (about 2 µs per match, ten times
 * the cost of reading an id), so past that, for very common terms, only a bounded set is scored:
 * 1. matches with every word in the title: the newest rankAllMax/4 by title relevance, then
 *    the older ones newest first;
 * 2. then the other matches: the newest rankAllMax/4 by relevance, then the rest newest first.
 * Among equally relevant articles the newest still come first.
 */
export function rankMatches(db: Db, words: readonly string[], exposure: ExposureIndex, rankAllMax: number): Int32Array {
  const match = matchFor(words);
  if (match === undefined) return new Int32Array(0);
  const exposed = exposedOf(ftsMatchIds(db, match), exposure);
  if (exposed.length === 0) return new Int32Array(0);
  if (exposed.length <= rankAllMax) return byScore(ftsMatchesFrom(db, match, exposed[0]!), exposure, () => true);

  const window = Math.max(1, Math.floor(rankAllMax / 4));
  const titleMatch = `{title} : (${match})`;
  const inTitle = new Uint8Array(exposed[exposed.length - 1]! + 1);
  const titled = exposedOf(ftsMatchIds(db, titleMatch), exposure);
  for (const id of titled) inTitle[id] = 1;
  const others = exposed.filter((id) => inTitle[id] === 0);

  const parts: Int32Array[] = [];
  for (const [ids, query, wanted] of [
    [titled, titleMatch, 1],
    [others, match, 0],
  ] as const) {
    if (ids.length > 0) parts.push(...rankNewest(db, query, ids, exposure, window, (id) => inTitle[id] === wanted));
  }
  const all = new Int32Array(exposed.length);
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  return all;
}

/**
 * The `window` newest of `ids` (ascending) ranked by score, then the others newest first. FTS5
 * scores a range of ids cheaply, not a list: the range starts at the lowest id of the window,
 * but never takes in more than two windows of matches (an old id republished now would
 * otherwise stretch it over everything); window articles below it are left to the second part.
 */
function rankNewest(db: Db, query: string, ids: number[], exposure: ExposureIndex, window: number, wanted: (id: number) => boolean): [Int32Array, Int32Array] {
  const newestFirst = byOrder(ids, exposure);
  let from = ids[Math.max(0, ids.length - 2 * window)]!;
  let lowest = Number.MAX_SAFE_INTEGER;
  for (const id of newestFirst.subarray(0, window)) lowest = Math.min(lowest, id);
  from = Math.max(from, lowest);
  const inWindow = new Uint8Array(ids[ids.length - 1]! + 1);
  for (const id of newestFirst.subarray(0, window)) if (id >= from) inWindow[id] = 1;
  const ranked = byScore(ftsMatchesFrom(db, query, from), exposure, (id) => inWindow[id] === 1 && wanted(id));
  return [ranked, newestFirst.filter((id) => inWindow[id] !== 1)];
}

function exposedOf(ids: number[], exposure: ExposureIndex): number[] {
  return ids.filter((id) => exposure.rank(id) >= 0);
}

/** Ids in partner order (newest first, ties by slug). */
function byOrder(ids: number[], exposure: ExposureIndex): Int32Array {
  const ordered = exposure.ordered;
  if (ordered) {
    // One pass over the locale's ordering: cheaper than sorting tens of thousands of ids.
    const wanted = new Uint8Array(ids[ids.length - 1]! + 1);
    for (const id of ids) wanted[id] = 1;
    const out = new Int32Array(ids.length);
    let n = 0;
    for (const id of ordered) if (wanted[id] === 1 && exposure.rank(id) >= 0) out[n++] = id;
    return out;
  }
  // Packed as order * 2^24 + index, so one numeric sort of a typed array does it.
  const keys = new Float64Array(ids.length);
  ids.forEach((id, i) => (keys[i] = exposure.rank(id) * 16_777_216 + i));
  keys.sort();
  const out = new Int32Array(ids.length);
  keys.forEach((key, i) => (out[i] = ids[key % 16_777_216]!));
  return out;
}

/**
 * Keeps the exposed matches `wanted` accepts, best score first, ties by partner order.
 * Typed arrays and an index sort: an array of objects took twice the time and more garbage.
 */
function byScore(matches: Iterable<[number, number]>, exposure: ExposureIndex, wanted: (id: number) => boolean): Int32Array {
  let ids = new Int32Array(1024);
  let scores = new Float64Array(1024);
  let orders = new Int32Array(1024);
  let n = 0;
  for (const [id, score] of matches) {
    const order = exposure.rank(id);
    if (order < 0 || !wanted(id)) continue;
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
