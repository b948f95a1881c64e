import type { Db } from '../../db/sqlite/connection.js';
import { articleHeads, dataVersion, ftsMatchesFrom } from './fts-table.js';

/*
 * How the embedded engine scores the matches it ranks (src/search/sqlite/sqlite-rank.ts): bm25
 * from the FTS5 index for queries with an uncommon word, and a bm25-like score from the title
 * and excerpt, kept per thread for recently scored articles, for queries of common words only.
 */

/**
 * Scores of (at least) the given ids, ascending, into `out`; a lower score is a better match.
 * The caller keeps the ids it asked for.
 */
export type Scorer = (ids: Int32Array, titleOnly: boolean, out: Scores) => void;

/** Scores of one scoring call, reused from query to query (a thread ranks one query at a time). */
export class Scores {
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
/**
 * bm25 from the index, for an FTS5 expression of uncommon words. FTS5 scores a range of ids
 * cheaply, not a list: the range starts at the lowest id asked for.
 */
export function indexScorer(db: Db, match: string): Scorer {
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
export function textScorer(db: Db, words: readonly string[]): Scorer {
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
