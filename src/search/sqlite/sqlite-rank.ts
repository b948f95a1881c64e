import type { Db } from '../../db/sqlite/connection.js';
import { articleHeads, ftsMatchesFrom } from './fts-table.js';
import type { ExposureIndex } from '../engine.js';
import { matchFor } from './match-expression.js';
import { intersect, type TermSets } from './term-sets.js';

/** How a query is ranked: see rankMatches. */
export interface RankOptions {
  /** Up to this many exposed matches, every match is ranked by relevance. */
  rankAllMax: number;
  /** A word matching at least this many articles is common: its occurrences are not scored by the index. */
  commonMin: number;
}

/**
 * Every exposed match of `words`, best first. The total is always exact: the ids of every
 * word's matches are read (cheap: no scoring; kept across queries in `terms`), intersected,
 * then filtered by exposure.
 *
 * Scoring is what costs, and for common words most of all: the index reads the positions of
 * every occurrence of the word in every body, even for a handful of articles. So common words
 * (in `commonMin` articles or more) are never scored by the index. The query's other words are
 * scored with bm25 (title weighted most), as before; a query of common words only is scored
 * from the title and excerpt of its matches (their bodies nearly all hold such words anyway,
 * and bm25 gives a word in most articles next to no weight).
 *
 * Up to `rankAllMax` exposed matches, every match is ranked, ties by partner order (newest
 * first). Past that, only a bounded set is scored:
 * 1. matches with every word in the title: the newest rankAllMax/4 by title relevance, then
 *    the older ones newest first;
 * 2. then the other matches: the newest rankAllMax/4 by relevance, then the rest newest first.
 * Among equally relevant articles the newest still come first.
 */
export function rankMatches(db: Db, words: readonly string[], exposure: ExposureIndex, options: RankOptions, terms: TermSets): Int32Array {
  if (words.length === 0) return new Int32Array(0);
  terms.check(db);
  const sets = words.map((w) => terms.all(db, w));
  const exposed = exposedOf(intersect(sets), exposure);
  if (exposed.length === 0) return new Int32Array(0);
  const rare = words.filter((_, i) => sets[i]!.size < options.commonMin);
  const scorer = rare.length > 0 ? indexScorer(db, matchFor(rare)!) : textScorer(db, words);
  const { rankAllMax } = options;
  const candidate = new Uint8Array(exposed[exposed.length - 1]! + 1);
  for (let i = 0; i < exposed.length; i++) candidate[exposed[i]!] = 1;
  if (exposed.length <= rankAllMax) return byScore(scorer(exposed, false), exposure, (id) => candidate[id] === 1);

  const window = Math.max(1, Math.floor(rankAllMax / 4));
  const inTitle = new Uint8Array(candidate.length);
  // Typed arrays and index loops from here: these run over up to 100,000 ids per query.
  const titled = keep(exposedOf(intersect(words.map((w) => terms.title(db, w))), exposure), (id) => candidate[id] === 1);
  for (let i = 0; i < titled.length; i++) inTitle[titled[i]!] = 1;
  const others = keep(exposed, (id) => inTitle[id] === 0);

  const parts: Int32Array[] = [];
  for (const [ids, titleOnly, wanted] of [
    [titled, true, 1],
    [others, false, 0],
  ] as const) {
    if (ids.length > 0) parts.push(...rankNewest(ids, exposure, window, (window) => scorer(window, titleOnly), (id) => inTitle[id] === wanted));
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
 * Scores of (at least) the given ids, ascending; a lower score is a better match. The caller
 * keeps the ids it asked for.
 */
type Scorer = (ids: ArrayLike<number>, titleOnly: boolean) => Iterable<[number, number]>;

/**
 * bm25 from the index, for an FTS5 expression of uncommon words. FTS5 scores a range of ids
 * cheaply, not a list: the range starts at the lowest id asked for.
 */
function indexScorer(db: Db, match: string): Scorer {
  return (ids, titleOnly) => ftsMatchesFrom(db, titleOnly ? `{title} : (${match})` : match, ids[0]!);
}

// bm25's parameters, on the two short fields read from the articles table.
const K1 = 1.2;
const B = 0.75;
const FIELDS = [
  { weight: 10, averageTokens: 8 },
  { weight: 4, averageTokens: 24 },
];

/**
 * A bm25-like score from the title and excerpt of each article (the body is not read). Words
 * are counted as substrings of the lowercased text, and a text's length in tokens estimated
 * from its spaces (Chinese: two characters a word): this only orders articles that all match,
 * and segmenting a thousand texts would cost more than the search.
 */
function textScorer(db: Db, words: readonly string[]): Scorer {
  const needles = words.map((w) => w.toLowerCase());
  return function* (ids, titleOnly) {
    for (const [id, ...texts] of articleHeads(db, ids)) {
      let score = 0;
      for (let f = 0; f < (titleOnly ? 1 : 2); f++) {
        const text = texts[f]!.toLowerCase();
        const { weight, averageTokens } = FIELDS[f]!;
        const tokens = Math.max(1, HAN_TEXT.test(text) ? text.length / 2 : text.split(' ').length);
        for (const needle of needles) {
          let tf = 0;
          for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) tf++;
          if (tf > 0) score += (weight * (tf * (K1 + 1))) / (tf + K1 * (1 - B + (B * tokens) / averageTokens));
        }
      }
      yield [id, -score];
    }
  };
}

const HAN_TEXT = /\p{Script=Han}/u;

/**
 * The `window` newest of `ids` (ascending) ranked by score, then the others newest first. The
 * window is scored from its lowest id, but never takes in more than two windows of matches (an
 * old id republished now would otherwise stretch an index range over everything); window
 * articles below that are left to the second part.
 */
function rankNewest(ids: Int32Array, exposure: ExposureIndex, window: number, score: (ids: number[]) => Iterable<[number, number]>, wanted: (id: number) => boolean): [Int32Array, Int32Array] {
  const newestFirst = byOrder(ids, exposure);
  const from = ids[Math.max(0, ids.length - 2 * window)]!;
  const inWindow = new Uint8Array(ids[ids.length - 1]! + 1);
  const chosen: number[] = [];
  for (const id of newestFirst.subarray(0, window)) {
    if (id < from) continue;
    inWindow[id] = 1;
    chosen.push(id);
  }
  chosen.sort((a, b) => a - b);
  const ranked = chosen.length > 0 ? byScore(score(chosen), exposure, (id) => inWindow[id] === 1 && wanted(id)) : new Int32Array(0);
  return [ranked, keep(newestFirst, (id) => inWindow[id] !== 1)];
}

/** The ids `wanted` accepts, in their order. */
function keep(ids: Int32Array, wanted: (id: number) => boolean): Int32Array {
  const out = new Int32Array(ids.length);
  let n = 0;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (wanted(id)) out[n++] = id;
  }
  return out.subarray(0, n);
}

function exposedOf(ids: Int32Array, exposure: ExposureIndex): Int32Array {
  return keep(ids, (id) => exposure.rank(id) >= 0);
}

/** Ids in partner order (newest first, ties by slug). */
function byOrder(ids: Int32Array, exposure: ExposureIndex): Int32Array {
  const ordered = exposure.ordered;
  if (ordered) {
    // One pass over the locale's ordering: cheaper than sorting tens of thousands of ids.
    const wanted = new Uint8Array(ids[ids.length - 1]! + 1);
    for (let i = 0; i < ids.length; i++) wanted[ids[i]!] = 1;
    const out = new Int32Array(ids.length);
    let n = 0;
    for (let i = 0; i < ordered.length && n < ids.length; i++) {
      const id = ordered[i]!;
      if (wanted[id] === 1 && exposure.rank(id) >= 0) out[n++] = id;
    }
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
