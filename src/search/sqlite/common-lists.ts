import type Database from 'better-sqlite3';
import { DEFAULT_COMMON_MIN } from '../../config/search.js';
import { statementsFor, type Db } from '../../db/sqlite/sqlite-file.js';
import { normalizeQuery } from '../normalize.js';
import { FTS_TOKENIZE, frequentTerms, ftsMatchIdArray, type FtsDocument } from './fts-table.js';
import { matchFor } from './match-expression.js';

/*
 * Champion lists kept in the snapshot (table search_common_lists, migration 0004): for the
 * index's most common words, the ids of the articles `"word"*` matches, anywhere and in the
 * title. Reading such a word from FTS5 costs tens of milliseconds (its doclist holds the
 * position of every occurrence in every body); reading its list here costs a few microseconds.
 * The worker keeps them in the transaction that changes the index (sqlite-index.ts), so a
 * search thread can use them from its first query, right after a start or a sync.
 */

/** Which words are listed: those in at least `minDocs` articles, most frequent first, within `maxBytes` (SEARCH_LISTS_*). */
export interface ListLimits {
  minDocs: number;
  maxBytes: number;
}

/** The worker's defaults (SEARCH_LISTS_MIN_DOCS, SEARCH_LISTS_MB): at 110,000 articles about 300 words. */
export const DEFAULT_LIST_LIMITS: ListLimits = { minDocs: DEFAULT_COMMON_MIN, maxBytes: 8 * 1024 * 1024 };
/** Past this many changed articles, recomputing every list is cheaper than following them. */
export const COMMON_LISTS_DELTA_MAX = 5_000;

export type ListField = 'all' | 'title';
export type ListEncoding = 'bitmap' | 'ids';

/** A list as stored: ascending ids, or a bitmap over them (bit i of word w is id 32w + i). */
export interface StoredList {
  docs: number;
  encoding: ListEncoding;
  words: Uint32Array;
}

interface Statements {
  fresh: Database.Statement<[], number | undefined>;
  setFresh: Database.Statement<[number]>;
  read: Database.Statement<[string, string], { docs: number; encoding: ListEncoding; ids: Buffer }>;
  listed: Database.Statement<[], { word: string; field: ListField }>;
  write: Database.Statement<[string, string, number, string, Buffer]>;
  clear: Database.Statement<[]>;
  mostCommon: Database.Statement<[number], string>;
}

const prepared = statementsFor(
  (sqlite): Statements => ({
    fresh: sqlite.prepare<[], number | undefined>('SELECT fresh FROM search_common_lists_state WHERE id = 1').pluck(),
    setFresh: sqlite.prepare('UPDATE search_common_lists_state SET fresh = ? WHERE id = 1'),
    read: sqlite.prepare('SELECT docs, encoding, ids FROM search_common_lists WHERE word = ? AND field = ?'),
    listed: sqlite.prepare('SELECT word, field FROM search_common_lists'),
    write: sqlite.prepare('INSERT OR REPLACE INTO search_common_lists (word, field, docs, encoding, ids) VALUES (?, ?, ?, ?, ?)'),
    clear: sqlite.prepare('DELETE FROM search_common_lists'),
    mostCommon: sqlite.prepare<[number], string>(`SELECT word FROM search_common_lists WHERE field = 'all' ORDER BY docs DESC, word LIMIT ?`).pluck(),
  }),
);

// ---- Reading (the API's search threads) ----

/** True while the lists match the index (no write since the worker last brought them up to date). */
export function commonListsFresh(db: Db): boolean {
  return prepared(db).fresh.get() === 1;
}

/** The stored list of a word, or undefined when it has none. Check commonListsFresh first. */
export function readCommonList(db: Db, word: string, field: ListField): StoredList | undefined {
  const row = prepared(db).read.get(word, field);
  return row && { docs: row.docs, encoding: row.encoding, words: wordsOf(row.ids) };
}

/** The most common listed words, most frequent first (a thread rehearses queries of them). */
export function commonWords(db: Db, limit: number): string[] {
  return prepared(db).mostCommon.all(limit);
}

// ---- Writing (the worker, inside the transaction that changed the index) ----

/** The index writes of one transaction (sqlite-index.ts records them), for the lists to follow. */
export class IndexChanges {
  /** `wereFresh`: read before the transaction's first write, whether the lists matched the index then. */
  constructor(
    readonly wereFresh: boolean,
    readonly limits: ListLimits,
  ) {}

  /** Each changed article's new index text; null when it left the index. */
  readonly docs = new Map<number, FtsDocument | null>();
  /** Every list is recomputed: the index was rebuilt, or too many articles changed to follow. */
  whole = false;

  record(id: number, doc: FtsDocument | null): void {
    if (this.whole) return;
    this.docs.set(id, doc);
    if (this.docs.size > COMMON_LISTS_DELTA_MAX) this.wholeIndex();
  }

  wholeIndex(): void {
    this.whole = true;
    this.docs.clear();
  }
}

/**
 * Brings the lists up to date with the index after `changes`, in the caller's write
 * transaction, and marks them fresh. Lists that were not fresh before the transaction (a
 * manual fix or another tool wrote meanwhile, or the snapshot was just migrated) are
 * recomputed from the index, as are all of them after a rebuild or a full sync: that also
 * picks the words anew. Otherwise only the changed articles are looked at. Returns what it did.
 */
export function refreshCommonLists(db: Db, changes: IndexChanges): CommonListsRefresh {
  const result = changes.whole || !changes.wereFresh ? recomputeAll(db, changes.limits) : followChanges(db, changes);
  prepared(db).setFresh.run(1);
  return result;
}

/** What refreshCommonLists did: recomputed every list or followed the changes; words listed; bytes written. */
export interface CommonListsRefresh {
  mode: 'whole' | 'changes';
  words: number;
  bytes: number;
}

/** Every list from the index: the words in `minDocs` articles or more, most frequent first, within `maxBytes`. */
function recomputeAll(db: Db, limits: ListLimits): CommonListsRefresh {
  const s = prepared(db);
  s.clear.run();
  let bytes = 0;
  let words = 0;
  const { terms, largestId } = frequentTerms(db, limits.minDocs);
  for (const term of candidateWords(terms)) {
    // Only words a query produces as they are (a normalized word is an index term).
    if (normalizeQuery(term).words.join(' ') !== term) continue;
    const all = encode(ftsMatchIdArray(db, matchFor([term])!), largestId);
    const title = encode(ftsMatchIdArray(db, titleMatch(term)), largestId);
    bytes += all.words.byteLength + title.words.byteLength;
    if (bytes > limits.maxBytes) break;
    write(s, term, 'all', all);
    write(s, term, 'title', title);
    words += 1;
  }
  return { mode: 'whole', words, bytes };
}

const HAN = /^\p{Script=Han}+$/u;

/**
 * The words to list, most frequent first: the index's common terms, and the first two
 * characters of its common Chinese terms. A Chinese query word is often the start of longer
 * indexed words (`激光` of `激光器`, as the index segmented `激光器件`), and a prefix query of it
 * reads all their doclists; such a word ranks with the most frequent term it starts.
 */
function candidateWords(terms: readonly [string, number][]): string[] {
  const docs = new Map<string, number>();
  const add = (word: string, n: number) => docs.set(word, Math.max(n, docs.get(word) ?? 0));
  for (const [term, n] of terms) {
    add(term, n);
    const chars = [...term];
    if (chars.length > 2 && HAN.test(term)) add(chars.slice(0, 2).join(''), n);
  }
  return [...docs].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([word]) => word);
}

/**
 * Follows the changed articles only: their new text goes into a small temporary index with
 * the same tokenizer, each listed word is matched there, and its list loses the changed ids
 * and gains the ones that match now. The set of words stays until the next full sync. The
 * lists are read one at a time: all of them at once (up to SEARCH_LISTS_MB, 8 MB, and a copy
 * of each) were most of an incremental sync's memory (docs/operations.md#the-sync-workers-memory).
 */
function followChanges(db: Db, changes: IndexChanges): CommonListsRefresh {
  const s = prepared(db);
  const rows = s.listed.all();
  if (changes.docs.size === 0 || rows.length === 0) return { mode: 'changes', words: rows.length / 2, bytes: 0 };
  const delta = deltaIndex(db);
  delta.clear.run();
  let largestId = 0;
  for (const [id, doc] of changes.docs) {
    largestId = Math.max(largestId, id);
    if (doc) delta.insert.run(id, doc.title, doc.excerpt, doc.body, doc.sectionName, doc.author);
  }
  let bytes = 0;
  for (const row of rows) {
    const matched = new Set(delta.match.all(row.field === 'title' ? titleMatch(row.word) : matchFor([row.word])!));
    const list = readCommonList(db, row.word, row.field)!;
    const bits = toBitmap(list, largestId);
    let changed = false;
    let docs = list.docs;
    for (const id of changes.docs.keys()) {
      const had = (bits[id >>> 5]! & (1 << (id & 31))) !== 0;
      const has = matched.has(id);
      if (had === has) continue;
      bits[id >>> 5]! ^= 1 << (id & 31);
      docs += has ? 1 : -1;
      changed = true;
    }
    if (changed) {
      const written = encodeBitmap(bits, docs);
      write(s, row.word, row.field, written);
      bytes += written.words.byteLength;
    }
  }
  delta.clear.run();
  return { mode: 'changes', words: rows.length / 2, bytes };
}

// A temporary table (the connection's temp schema, never in the snapshot), tokenized exactly
// as articles_fts is, so a word matches a changed article here exactly when it does there.
const CREATE_DELTA = `CREATE VIRTUAL TABLE IF NOT EXISTS temp.common_lists_changes USING fts5(title, excerpt, body, section_name, author, tokenize = '${FTS_TOKENIZE}')`;

/**
 * The delta index's statements. The table is created again when missing: created inside a
 * sync's transaction, it goes when that transaction rolls back, while the prepared statements
 * stay (SQLite prepares them again once the table exists).
 */
function deltaIndex(db: Db) {
  db.$client.exec(CREATE_DELTA);
  return deltaStatements(db);
}

const deltaStatements = statementsFor((sqlite) => {
  sqlite.exec(CREATE_DELTA);
  return {
    clear: sqlite.prepare(`DELETE FROM temp.common_lists_changes`),
    insert: sqlite.prepare<[number, string, string, string, string, string]>(
      'INSERT INTO temp.common_lists_changes (rowid, title, excerpt, body, section_name, author) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    match: sqlite.prepare<[string], number>('SELECT rowid FROM temp.common_lists_changes WHERE common_lists_changes MATCH ?').pluck(),
  };
});

function titleMatch(word: string): string {
  return `{title} : (${matchFor([word])!})`;
}

function write(s: Statements, word: string, field: ListField, list: StoredList): void {
  s.write.run(word, field, list.docs, list.encoding, Buffer.from(list.words.buffer, list.words.byteOffset, list.words.byteLength));
}

// ---- Encoding ----

/**
 * Ascending ids as stored: a bitmap when the word is in more than one article in 32 (smaller
 * then: a word in most of 110,000 articles takes 14 KB, not 400), else the ids themselves.
 */
export function encode(ids: Int32Array, largestId: number): StoredList {
  const max = Math.max(largestId, ids.length > 0 ? ids[ids.length - 1]! : 0);
  if (ids.length * 32 < max) return { docs: ids.length, encoding: 'ids', words: new Uint32Array(ids.buffer, ids.byteOffset, ids.length) };
  const bits = new Uint32Array((max >>> 5) + 1);
  for (let i = 0; i < ids.length; i++) bits[ids[i]! >>> 5]! |= 1 << (ids[i]! & 31);
  return { docs: ids.length, encoding: 'bitmap', words: bits };
}

function encodeBitmap(bits: Uint32Array, docs: number): StoredList {
  if (docs >= bits.length) return { docs, encoding: 'bitmap', words: bits };
  const ids = new Uint32Array(docs);
  let n = 0;
  for (let w = 0; w < bits.length; w++) {
    for (let word = bits[w]!; word !== 0; word &= word - 1) ids[n++] = (w << 5) + (31 - Math.clz32(word & -word));
  }
  return { docs, encoding: 'ids', words: ids };
}

/** A stored list as a bitmap wide enough for `largestId`. */
function toBitmap(list: StoredList, largestId: number): Uint32Array {
  if (list.encoding === 'bitmap') {
    if (list.words.length > largestId >>> 5) return list.words;
    const wider = new Uint32Array((largestId >>> 5) + 1);
    wider.set(list.words);
    return wider;
  }
  const top = list.words.length > 0 ? list.words[list.words.length - 1]! : 0;
  const bits = new Uint32Array((Math.max(largestId, top) >>> 5) + 1);
  for (let i = 0; i < list.words.length; i++) bits[list.words[i]! >>> 5]! |= 1 << (list.words[i]! & 31);
  return bits;
}

/** A blob's little-endian 32-bit words, copied: a Buffer from the driver need not be 4-byte aligned. */
function wordsOf(blob: Buffer): Uint32Array {
  const words = new Uint32Array(blob.byteLength >>> 2);
  new Uint8Array(words.buffer).set(blob.subarray(0, words.byteLength));
  return words;
}
