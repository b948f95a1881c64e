import type { Db } from '../../db/sqlite/connection.js';
import { articleHeads, dataVersion, ftsMatchesFrom } from './fts-table.js';
import type { ExposureIndex } from '../engine.js';
import { matchFor } from './match-expression.js';
import { intersect, type IdSet, type TermSets } from './term-sets.js';

/*
 * One piece on purpose (about 400 lines): ranking a query's matches is one pass over the
 * locale's ordering with shared scratch arrays (bitmaps, marks, the reused result array), and
 * the functions here hand those arrays to each other; split across files they would have to be
 * exported and their reuse rules (decisions 0050 and 0053) stated in several places.
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

/**
 * Scores of (at least) the given ids, ascending, into `out`; a lower score is a better match.
 * The caller keeps the ids it asked for.
 */
type Scorer = (ids: Int32Array, titleOnly: boolean, out: Scores) => void;

/** Scores of one scoring call, reused from query to query (a thread ranks one query at a time). */
class Scores {
  ids = new Int32Array(1024);
  scores = new Float64Array(1024);
  n = 0;

  clear(): this {
    this.n = 0;
    return this;
  }

  push(id: number, score: number): void {
    if (this.n === this.ids.length) {
      const ids = new Int32Array(this.n * 2);
      ids.set(this.ids);
      this.ids = ids;
      const scores = new Float64Array(this.n * 2);
      scores.set(this.scores);
      this.scores = scores;
    }
    this.ids[this.n] = id;
    this.scores[this.n] = score;
    this.n += 1;
  }
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

/**
 * bm25 from the index, for an FTS5 expression of uncommon words. FTS5 scores a range of ids
 * cheaply, not a list: the range starts at the lowest id asked for.
 */
function indexScorer(db: Db, match: string): Scorer {
  return (ids, titleOnly, out) => {
    for (const [id, score] of ftsMatchesFrom(db, titleOnly ? `{title} : (${match})` : match, ids[0]!)) out.push(id, score);
  };
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
  return (ids, titleOnly, out) => {
    const heads = headsOf(db, ids);
    for (let r = 0; r < heads.length; r++) {
      const head = heads[r]!;
      let score = 0;
      for (let f = 0; f < (titleOnly ? 1 : 2); f++) {
        const text = f === 0 ? head.title : head.excerpt;
        const tokens = f === 0 ? head.titleTokens : head.excerptTokens;
        const { weight, averageTokens } = FIELDS[f]!;
        for (const needle of needles) {
          let tf = 0;
          for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) tf++;
          if (tf > 0) score += (weight * (tf * (K1 + 1))) / (tf + K1 * (1 - B + (B * tokens) / averageTokens));
        }
      }
      out.push(head.id, -score);
    }
  };
}

/** What the text scorer reads of an article: its title and excerpt lowercased, and their lengths in tokens. */
interface Head {
  id: number;
  title: string;
  titleTokens: number;
  excerpt: string;
  excerptTokens: number;
}

/**
 * The heads of recently scored articles, per connection, for the snapshot version they were
 * read at, bounded at HEAD_BYTES (least recently used out first). The scored windows are the
 * newest matches of each query, so they overlap from query to query (300 random queries of
 * common words scored 180,000 heads of 11,600 articles): reading a window's 500 rows from the
 * snapshot cost 1-2 ms when their pages had left SQLite's cache (one 4 KB page per article:
 * the rows hold the bodies), a hit a fraction of a microsecond.
 */
const HEAD_BYTES = 2 * 1024 * 1024;
const headCaches = new WeakMap<object, { version: number; heads: Map<number, Head>; bytes: number }>();

function headsOf(db: Db, ids: Int32Array): Head[] {
  const version = dataVersion(db);
  let cache = headCaches.get(db.$client);
  if (!cache || cache.version !== version) {
    cache = { version, heads: new Map(), bytes: 0 };
    headCaches.set(db.$client, cache);
  }
  const found: Head[] = [];
  const missing: number[] = [];
  for (let i = 0; i < ids.length; i++) {
    const head = cache.heads.get(ids[i]!);
    if (head) {
      // Most recently used last: a Map iterates in insertion order.
      cache.heads.delete(head.id);
      cache.heads.set(head.id, head);
      found.push(head);
    } else missing.push(ids[i]!);
  }
  if (missing.length === 0) return found;
  for (const [id, title, excerpt] of articleHeads(db, missing)) {
    const [lowTitle, lowExcerpt] = [title.toLowerCase(), excerpt.toLowerCase()];
    const head = { id, title: lowTitle, titleTokens: tokensOf(lowTitle), excerpt: lowExcerpt, excerptTokens: tokensOf(lowExcerpt) };
    found.push(head);
    cache.heads.set(id, head);
    cache.bytes += headBytes(head);
  }
  for (const head of cache.heads.values()) {
    if (cache.bytes <= HEAD_BYTES) break;
    cache.heads.delete(head.id);
    cache.bytes -= headBytes(head);
  }
  return found;
}

function headBytes(head: Head): number {
  return 2 * (head.title.length + head.excerpt.length) + 96;
}

/** A text's length in tokens, estimated from its spaces (Chinese: two characters a word). */
function tokensOf(text: string): number {
  return Math.max(1, HAN_TEXT.test(text) ? text.length / 2 : spaces(text) + 1);
}

const HAN_TEXT = /\p{Script=Han}/u;

/** How many spaces `text` holds (what split(' ').length - 1 counts, without the strings). */
function spaces(text: string): number {
  let n = 0;
  for (let at = text.indexOf(' '); at !== -1; at = text.indexOf(' ', at + 1)) n++;
  return n;
}
