import type { Db } from '../../db/sqlite/connection.js';
import { dataVersion, ftsMatchIdArray } from './fts-table.js';
import { commonListsFresh, readCommonList, type ListField, type StoredList } from './common-lists.js';
import { entryBytes, Lru } from '../../lib/lru.js';
import { matchFor } from './match-expression.js';

/**
 * The ids of the articles each query word matches (anywhere, and in the title), kept across
 * queries in a byte-bounded cache. Queries are rarely repeated, but their words are: partners'
 * terms are drawn from the same few hundred common words. A common word's list costs tens of
 * milliseconds to read from the index (its doclist holds the positions of every occurrence in
 * every body), so the worker keeps the lists of the most common words in the snapshot
 * (common-lists.ts: champion lists), read here in microseconds while they match the index;
 * other words are read from the index. From here a query is an intersection of sorted lists,
 * well under a millisecond. Emptied when the snapshot changes (another connection committed,
 * or the file was replaced), so the lists always match the index.
 */
export class TermSets {
  private readonly lists: Lru<IdSet>;
  private db: Db | undefined;
  private version = -1;
  /** Whether the snapshot's champion lists match its index, as of `version`. */
  private listsFresh = false;

  constructor(maxBytes: number) {
    this.lists = new Lru(maxBytes);
  }

  /** Forgets every list when the snapshot changed since the last query. */
  check(db: Db): void {
    const version = dataVersion(db);
    if (db === this.db && version === this.version) return;
    this.lists.clear();
    this.db = db;
    this.version = version;
    this.listsFresh = commonListsFresh(db);
  }

  /** Ascending ids of the articles `word` matches (as a word or the start of one), in any column. */
  all(db: Db, word: string): IdSet {
    return this.read(db, word, 'all');
  }

  /** The same, in the title only. */
  title(db: Db, word: string): IdSet {
    return this.read(db, word, 'title');
  }

  private read(db: Db, word: string, field: ListField): IdSet {
    const key = `${field}|${word}`;
    let ids = this.lists.get(key);
    if (!ids) {
      const stored = this.listsFresh ? readCommonList(db, word, field) : undefined;
      const match = field === 'all' ? matchFor([word])! : `{title} : (${matchFor([word])!})`;
      ids = stored ? IdSet.stored(stored) : IdSet.of(ftsMatchIdArray(db, match));
      // A word no article has costs one lookup in the index's term list: not worth a place
      // (distinct unknown words, a typo each, would fill the cache with nothing).
      if (ids.size > 0) this.lists.set(key, ids, entryBytes(key, ids.byteLength));
    }
    return ids;
  }

  clear(): void {
    this.lists.clear();
  }

  stats() {
    return this.lists.stats();
  }
}

/**
 * The articles a word matches: ascending ids, or for a word in more than one article in 32, a
 * bitmap over the ids (smaller then: a word in most of 110,000 articles takes 14 KB, not 400).
 */
export class IdSet {
  private constructor(
    readonly size: number,
    private readonly ids: Int32Array | undefined,
    private readonly bits: Uint32Array | undefined,
  ) {}

  static of(ids: Int32Array): IdSet {
    const max = ids.length > 0 ? ids[ids.length - 1]! : 0;
    if (ids.length * 32 < max) return new IdSet(ids.length, ids, undefined);
    const bits = new Uint32Array((max >>> 5) + 1);
    for (const id of ids) bits[id >>> 5]! |= 1 << (id & 31);
    return new IdSet(ids.length, undefined, bits);
  }

  /** A champion list as the snapshot stores it (common-lists.ts). */
  static stored(list: StoredList): IdSet {
    if (list.encoding === 'bitmap') return new IdSet(list.docs, undefined, list.words);
    return new IdSet(list.docs, new Int32Array(list.words.buffer, list.words.byteOffset, list.words.length), undefined);
  }

  get byteLength(): number {
    return (this.ids ?? this.bits)!.byteLength;
  }

  // Reads stay within the arrays, here and in intersect: an optimized function that reads past
  // an array's end is thrown away the first time it does, and V8 compiles it again while a
  // partner waits (`has` and `intersect`, 3-6 ms each on the core the search shared).
  has(id: number): boolean {
    const bits = this.bits;
    if (bits) {
      const word = id >>> 5;
      return word < bits.length && (bits[word]! & (1 << (id & 31))) !== 0;
    }
    const ids = this.ids!;
    let lo = 0;
    let hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ids[mid]! < id) lo = mid + 1;
      else hi = mid;
    }
    return lo < ids.length && ids[lo] === id;
  }

  /** The ids, ascending (loops, not a generator: this runs over up to 100,000 ids per query). */
  toArray(): Int32Array {
    if (this.ids) return this.ids;
    return idsOfBitmap(this.bits!, this.size);
  }

  /** The bitmap, when the set is dense. */
  get bitmap(): Uint32Array | undefined {
    return this.bits;
  }
}

/** The ids in every one of the sets, ascending. */
export function intersect(sets: readonly IdSet[]): Int32Array {
  if (sets.length === 0) return new Int32Array(0);
  const [smallest, ...others] = [...sets].sort((a, b) => a.size - b.size);
  if (others.length === 0) return smallest!.toArray();
  const dense = others.every((o) => o.bitmap) && smallest!.bitmap;
  if (dense) {
    // Dense sets only: AND the bitmaps word by word, then read the ids out once.
    const bits = Uint32Array.from(smallest!.bitmap!);
    for (const other of others) {
      const b = other.bitmap!;
      const shared = Math.min(bits.length, b.length);
      for (let w = 0; w < shared; w++) bits[w]! &= b[w]!;
      bits.fill(0, shared);
    }
    return idsOfBitmap(bits, smallest!.size);
  }
  const ids = smallest!.toArray();
  const out = new Int32Array(ids.length);
  let n = 0;
  next: for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    for (const other of others) if (!other.has(id)) continue next;
    out[n++] = id;
  }
  return out.subarray(0, n);
}

/** The ids whose bits are set, ascending; `most` bounds how many there can be. */
function idsOfBitmap(bits: Uint32Array, most: number): Int32Array {
  const out = new Int32Array(most);
  let n = 0;
  for (let w = 0; w < bits.length; w++) {
    let word = bits[w]!;
    while (word !== 0) {
      const low = word & -word;
      out[n++] = (w << 5) + (31 - Math.clz32(low));
      word ^= low;
    }
  }
  return n === most ? out : out.subarray(0, n);
}
