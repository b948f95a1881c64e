import type Database from 'better-sqlite3';
import { statementsFor, type Db } from '../../db/sqlite/sqlite-file.js';

/** The text columns of articles_fts, already segmented (src/search/segment.ts). */
export interface FtsDocument {
  title: string;
  excerpt: string;
  body: string;
  sectionName: string;
  author: string;
}

/** articles_fts's tokenizer, as migration 0001 created it (a test compares the two). */
export const FTS_TOKENIZE = 'unicode61 remove_diacritics 2';

// bm25 column weights, in the column order of the articles_fts table: a match in the title
// counts most, then the excerpt, the section name and the author, then the body.
const WEIGHTS = '10.0, 4.0, 1.0, 2.0, 2.0';

interface Statements {
  matches: Database.Statement<[string], [number, number]>;
  matchIds: Database.Statement<[string], number>;
  scoresFrom: Database.Statement<[string, number], [number, number]>;
  matchIdText: Database.Statement<[string], string | null>;
  heads: Database.Statement<[string], [number, string, string]>;
  dataVersion: Database.Statement<[], number>;
  remove: Database.Statement<[number]>;
  insert: Database.Statement<[number, string, string, string, string, string]>;
}
const prepared = statementsFor(
  (sqlite): Statements => ({
    matches: sqlite
      .prepare<[string], [number, number]>(
        `SELECT rowid, bm25(articles_fts, ${WEIGHTS}) FROM articles_fts WHERE articles_fts MATCH ?`,
      )
      .raw(),
    matchIds: sqlite.prepare<[string], number>('SELECT rowid FROM articles_fts WHERE articles_fts MATCH ?').pluck(),
    // FTS5 seeks a rowid range in its doclists; an IN list or rowid = ? rescans them per id.
    scoresFrom: sqlite
      .prepare<[string, number], [number, number]>(
        `SELECT rowid, bm25(articles_fts, ${WEIGHTS}) FROM articles_fts WHERE articles_fts MATCH ? AND rowid >= ?`,
      )
      .raw(),
    // The ids joined inside SQLite and parsed at once: a row per id through the driver costs
    // more than reading the doclist.
    matchIdText: sqlite.prepare<[string], string | null>('SELECT group_concat(rowid) FROM articles_fts WHERE articles_fts MATCH ?').pluck(),
    heads: sqlite.prepare<[string], [number, string, string]>('SELECT id, title, excerpt FROM articles WHERE id IN (SELECT value FROM json_each(?))').raw(),
    dataVersion: sqlite.prepare<[], number>('PRAGMA data_version').pluck(),
    remove: sqlite.prepare('DELETE FROM articles_fts WHERE rowid = ?'),
    insert: sqlite.prepare(
      'INSERT INTO articles_fts (rowid, title, excerpt, body, section_name, author) VALUES (?, ?, ?, ?, ?, ?)',
    ),
  }),
);

/**
 * Every article matching an FTS5 expression, in any locale and state, as `[id, score]`; a
 * lower score is a better match. Filtering and ordering are the caller's: the FTS index alone
 * is fast, while joining it to articles and sections costs more than the search itself.
 */
export function ftsMatches(db: Db, match: string): IterableIterator<[number, number]> {
  return prepared(db).matches.iterate(match);
}

/**
 * The ids of every article matching an FTS5 expression, ascending, without scoring them:
 * about ten times cheaper per match than ftsMatches, whose cost is bm25.
 */
export function ftsMatchIds(db: Db, match: string): number[] {
  return prepared(db).matchIds.all(match);
}

/** As ftsMatchIds, as a typed array (ascending), read in one piece. */
export function ftsMatchIdArray(db: Db, match: string): Int32Array {
  const text = prepared(db).matchIdText.get(match);
  if (!text) return new Int32Array(0);
  return Int32Array.from(JSON.parse(`[${text}]`) as number[]);
}

/** Title and excerpt of the articles among `ids` (any state), as `[id, title, excerpt]`. */
export function articleHeads(db: Db, ids: ArrayLike<number>): [number, string, string][] {
  return prepared(db).heads.all(JSON.stringify(Array.from(ids)));
}

/** Changes whenever another connection commits to the database (SQLite's data_version). */
export function dataVersion(db: Db): number {
  return prepared(db).dataVersion.get()!;
}

/** As ftsMatches, for the matches whose id is at least `fromId` only. */
export function ftsMatchesFrom(db: Db, match: string, fromId: number): IterableIterator<[number, number]> {
  return prepared(db).scoresFrom.iterate(match, fromId);
}

// fts5vocab reads the index's own term list; a temp table, so a read-only connection can create
// it (it lives in the connection's temp schema, never in the snapshot).
const CREATE_VOCABULARY = `CREATE VIRTUAL TABLE IF NOT EXISTS temp.articles_fts_terms USING fts5vocab(main, 'articles_fts', 'row')`;

const vocabularyStatements = statementsFor((sqlite) => {
  sqlite.exec(CREATE_VOCABULARY);
  return {
    frequent: sqlite.prepare<[number], [string, number]>('SELECT term, doc FROM temp.articles_fts_terms WHERE doc >= ? ORDER BY doc DESC, term').raw(),
    largestId: sqlite.prepare<[], number | null>('SELECT max(id) FROM articles').pluck(),
  };
});

/**
 * The index's terms found in at least `minDocs` articles (any locale or state), most frequent
 * first, with their article counts. One pass over the index (about 0.3-0.7 s at 110,000
 * articles): the worker, once per full sync (src/search/sqlite/common-lists.ts).
 */
export function frequentTerms(db: Db, minDocs: number): { terms: [string, number][]; largestId: number } {
  // Created again when missing: made inside a sync's transaction, the table goes when that
  // transaction rolls back, while the prepared statements stay (and are prepared again).
  db.$client.exec(CREATE_VOCABULARY);
  const s = vocabularyStatements(db);
  return { terms: s.frequent.all(minDocs), largestId: s.largestId.get() ?? 0 };
}

/**
 * Writes the index entry of one article (inside the caller's write transaction), replacing
 * the previous one unless the article is new: deleting from a contentless index is not free.
 */
export function writeFtsDocument(db: Db, id: number, doc: FtsDocument, replace = true): void {
  const s = prepared(db);
  if (replace) s.remove.run(id);
  s.insert.run(id, doc.title, doc.excerpt, doc.body, doc.sectionName, doc.author);
}

export function deleteFtsDocument(db: Db, id: number): void {
  prepared(db).remove.run(id);
}
