import type { Db } from '../../db/sqlite/connection.js';
import type { ExposureIndex } from '../engine.js';
import { matchFor } from './match-expression.js';
import { intersect, type IdSet, type TermSets } from './term-sets.js';
import { indexScorer, Scores, textScorer } from './scorers.js';

/*
 * Ranking a query's matches: one pass over the locale's ordering with shared scratch arrays
 * (bitmaps, marks, the reused result array), handed from function to function (decisions 0050
 * and 0053); the scores themselves come from src/search/sqlite/scorers.ts.
 */

/** How a query is ranked: see rankMatches. */
export interface RankOptions {
  /** Up to this many exposed matches, every match is ranked by relevance. */
  rankAllMax: number;
  /** A word matching at least this many articles is common: its occurrences are not scored by the index. */
  commonMin: number;
}

/**
 * Every exposed match of all `words` by publication time instead of relevance (`order=newest`
 * or `oldest`, ties by slug): the partner order the exposure index holds, no scoring at all.
 */
export function matchesByTime(db: Db, words: readonly string[], exposure: ExposureIndex, order: 'newest' | 'oldest', terms: TermSets): Int32Array {
  if (words.length === 0) return new Int32Array(0);
  terms.check(db);
  const { newestFirst } = exposedMatches(
    words.map((w) => terms.all(db, w)),
    exposure,
  );
  // A copy: newestFirst is a scratch array, reused by the next ranking.
  const ids = Int32Array.from(newestFirst);
  if (order === 'newest') return ids;
  const oldestRank = exposure.oldestRank ?? ((): number => 0);
  return ids.sort((a, b) => oldestRank(a) - oldestRank(b));
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
 *
 * A common word matches most of the corpus (80,000 of 110,000 articles), so everything here
 * but the scoring runs in a few passes over typed arrays, with a byte per article id saying
 * where it stands (see Mark), and no call or allocation per match beyond the exposure check.
 * The ranking is written into `into(total)` (exactly that long): a new array unless the caller
 * passes one it reuses (RankedSearch keeps only a prefix of it).
 */
export function rankMatches(
  db: Db,
  words: readonly string[],
  exposure: ExposureIndex,
  options: RankOptions,
  terms: TermSets,
  into: (length: number) => Int32Array = (length) => new Int32Array(length),
): Int32Array {
  if (words.length === 0) return new Int32Array(0);
  terms.check(db);
  const sets = words.map((w) => terms.all(db, w));
  const { newestFirst, marks } = exposedMatches(sets, exposure);
  const total = newestFirst.length;
  if (total === 0) return new Int32Array(0);
  const rare = words.filter((_, i) => sets[i]!.size < options.commonMin);
  const scorer = rare.length > 0 ? indexScorer(db, matchFor(rare)!) : textScorer(db, words);
  const { rankAllMax } = options;
  const all = into(total);
  if (total <= rankAllMax) {
    all.set(newestFirst);
    const ascending = Int32Array.from(newestFirst).sort();
    scorer(ascending, false, scored.clear());
    rankInto(all, 0, total, total, exposure, marks, Mark.Other);
    return all;
  }

  // Split in one pass, each part newest first: the matches with every word in the title into
  // place (their marks become Titled), the others aside.
  const inTitle = matchBits(words.map((w) => terms.title(db, w)));
  const others = spareRest(total);
  let titled = 0;
  let other = 0;
  for (let i = 0; i < total; i++) {
    const id = newestFirst[i]!;
    const word = id >>> 5;
    if (word < inTitle.length && (inTitle[word]! & (1 << (id & 31))) !== 0) {
      marks[id] = Mark.Titled;
      all[titled++] = id;
    } else others[other++] = id;
  }
  all.set(others.subarray(0, other), titled);

  const window = Math.max(1, Math.floor(rankAllMax / 4));
  if (titled > 0) rankNewest(all, 0, titled, window, marks, Mark.Titled, exposure, (ids) => scorer(ids, true, scored.clear()));
  if (other > 0) rankNewest(all, titled, other, window, marks, Mark.Other, exposure, (ids) => scorer(ids, false, scored.clear()));
  return all;
}

/**
 * Where an article id stands in the query being ranked, one byte per id up to the largest
 * exposed match: not an exposed match (0), an exposed match with or without every word in the
 * title, plus flags for the scored window and for the ids ranked by score.
 */
const enum Mark {
  Other = 1,
  Titled = 2,
  Window = 4,
  Ranked = 8,
}

/**
 * The exposed matches of every set, in partner order (newest first), and their marks (Other).
 * Common words: one pass over the locale's ordering testing a bitmap of the matches, cheaper
 * than sorting tens of thousands of ids. Few matches, or no ordering at hand: sorted by rank.
 */
function exposedMatches(sets: readonly IdSet[], exposure: ExposureIndex): { newestFirst: Int32Array; marks: Uint8Array } {
  const ordered = exposure.ordered;
  const fewest = sets.reduce((min, s) => Math.min(min, s.size), Number.POSITIVE_INFINITY);
  if (fewest === 0) return { newestFirst: new Int32Array(0), marks: new Uint8Array(0) };
  let newestFirst: Int32Array;
  if (ordered && fewest * 32 >= ordered.length) {
    const bits = matchBits(sets);
    const most = Math.min(ordered.length, fewest);
    const out = spareExposed(most);
    let n = 0;
    for (let i = 0; i < ordered.length && n < most; i++) {
      const id = ordered[i]!;
      const word = id >>> 5;
      if (word < bits.length && (bits[word]! & (1 << (id & 31))) !== 0 && exposure.rank(id) >= 0) out[n++] = id;
    }
    newestFirst = out.subarray(0, n);
  } else {
    newestFirst = byRank(intersect(sets), exposure);
  }
  let largest = -1;
  for (let i = 0; i < newestFirst.length; i++) if (newestFirst[i]! > largest) largest = newestFirst[i]!;
  const marks = spareMarks(largest + 1).subarray(0, largest + 1).fill(0);
  for (let i = 0; i < newestFirst.length; i++) marks[newestFirst[i]!] = Mark.Other;
  return { newestFirst, marks };
}

/** A bitmap of the ids in every set (in a scratch array: valid until the next call). */
function matchBits(sets: readonly IdSet[]): Uint32Array {
  const sorted = [...sets].sort((a, b) => a.size - b.size);
  const smallest = sorted[0]!;
  if (sorted.every((s) => s.bitmap)) {
    const bits = spareBitmap(smallest.bitmap!.length);
    bits.set(smallest.bitmap!);
    for (let s = 1; s < sorted.length; s++) {
      const b = sorted[s]!.bitmap!;
      for (let w = 0; w < bits.length; w++) bits[w]! &= b[w] ?? 0;
    }
    return bits;
  }
  const ids = intersect(sets);
  const bits = spareBitmap(ids.length > 0 ? (ids[ids.length - 1]! >>> 5) + 1 : 0).fill(0);
  for (let i = 0; i < ids.length; i++) bits[ids[i]! >>> 5]! |= 1 << (ids[i]! & 31);
  return bits;
}

/** The exposed ids among `ids`, in partner order (newest first, ties by slug). */
function byRank(ids: Int32Array, exposure: ExposureIndex): Int32Array {
  // Packed as rank * 2^24 + index, so one numeric sort of a typed array does it.
  const keys = new Float64Array(ids.length);
  let n = 0;
  for (let i = 0; i < ids.length; i++) {
    const rank = exposure.rank(ids[i]!);
    if (rank >= 0) keys[n++] = rank * 16_777_216 + i;
  }
  const sorted = keys.subarray(0, n).sort();
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = ids[sorted[i]! % 16_777_216]!;
  return out;
}

/**
 * Ranks one part of `all` in place: `all[from, from + count)` holds the part newest first (its
 * ids marked `part`). The `window` newest are ranked by score, then the others newest first. The
 * window is scored from its lowest id, but never takes in more than two windows of matches (an
 * old id republished now would otherwise stretch an index range over everything); window
 * articles below that are left to the second part.
 */
function rankNewest(all: Int32Array, from: number, count: number, window: number, marks: Uint8Array, part: Mark, exposure: ExposureIndex, score: (ids: Int32Array) => void): void {
  const lowest = lowestOfNewestIds(all, from, count, 2 * window, marks, part);
  const head = Math.min(window, count);
  const chosen = new Int32Array(head);
  let n = 0;
  for (let i = from; i < from + head; i++) {
    const id = all[i]!;
    if (id < lowest) continue;
    marks[id] = part | Mark.Window;
    chosen[n++] = id;
  }
  if (n === 0) return;
  score(chosen.subarray(0, n).sort());
  rankInto(all, from, head, n, exposure, marks, part | Mark.Window);
}

/**
 * The `most`-th highest id of the part (its lowest when it has no more): counted down the marks
 * from the top, a short walk since the newest articles hold the highest ids.
 */
function lowestOfNewestIds(all: Int32Array, from: number, count: number, most: number, marks: Uint8Array, part: Mark): number {
  if (count <= most) {
    let lowest = all[from]!;
    for (let i = from + 1; i < from + count; i++) if (all[i]! < lowest) lowest = all[i]!;
    return lowest;
  }
  let seen = 0;
  for (let id = marks.length - 1; ; id--) if (marks[id] === part && ++seen === most) return id;
}

/**
 * Orders `all[from, from + head)` (ids newest first): the ids marked `wanted` that were scored
 * (in `scored`), best score first, ties by partner order; then the others of the range as they
 * were. `expected` is how many are marked `wanted` (a scorer that missed some leaves them,
 * unscored, to the second group).
 */
function rankInto(all: Int32Array, from: number, head: number, expected: number, exposure: ExposureIndex, marks: Uint8Array, wanted: number): void {
  const { ids, scores } = scored;
  const picked = spareIndex(expected);
  const orders = spareOrders(scored.n);
  let n = 0;
  for (let i = 0; i < scored.n && n < expected; i++) {
    const id = ids[i]!;
    if (id >= marks.length || marks[id] !== wanted) continue;
    marks[id] = wanted | Mark.Ranked;
    orders[i] = exposure.rank(id);
    picked[n++] = i;
  }
  const index = picked.subarray(0, n).sort((a, b) => scores[a]! - scores[b]! || orders[a]! - orders[b]!);
  const rest = spareRest(head);
  let r = 0;
  for (let i = from; i < from + head; i++) if ((marks[all[i]!]! & Mark.Ranked) === 0) rest[r++] = all[i]!;
  for (let i = 0; i < n; i++) all[from + i] = ids[index[i]!]!;
  all.set(rest.subarray(0, r), from + n);
}

const scored = new Scores();

/** A typed array of at least `length` elements, the same one from call to call (grown by doubling). */
function scratch<T extends Uint8Array | Int32Array | Uint32Array>(make: (length: number) => T): (length: number) => T {
  let array = make(0);
  return (length) => {
    if (array.length < length) array = make(Math.max(length, 2 * array.length));
    return array;
  };
}
// Scratch arrays reused from query to query (each for one purpose, so that none is overwritten
// while read): only ever read up to what the same call wrote. Fresh memory is dear: a new
// 300 KB array cost about a millisecond to fill on the measuring machine (its first writes
// fault its pages in), reused ones a few hundredths.
const spareMarks = scratch((n) => new Uint8Array(n));
const spareBits = scratch((n) => new Uint32Array(n));
const spareBitmap = (length: number) => spareBits(length).subarray(0, length);
const spareExposed = scratch((n) => new Int32Array(n));
const spareRest = scratch((n) => new Int32Array(n));
const spareIndex = scratch((n) => new Uint32Array(n));
const spareOrders = scratch((n) => new Int32Array(n));
