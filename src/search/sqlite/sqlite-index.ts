import type { Db } from '../../db/sqlite/connection.js';
import { deleteFtsDocument, writeFtsDocument } from './fts-table.js';
import { commonListsFresh, DEFAULT_LIST_LIMITS, IndexChanges, refreshCommonLists, type CommonListsRefresh, type ListLimits } from './common-lists.js';
import type { ArticleRecord } from '../../db/snapshot/records.js';
import { segmentForIndex } from '../segment.js';

/*
 * The one writer of the embedded full-text index (articles_fts). The sync worker stages, applies
 * and rebuilds through these functions only, inside its own transactions, so that how text is
 * segmented and which columns hold what is decided here, next to the queries that read it
 * (src/search/sqlite/sqlite-rank.ts). Each write is recorded in the transaction's IndexChanges,
 * so that the champion lists (common-lists.ts) follow the index in the same transaction.
 */

export type { IndexChanges };

/** Starts recording a write transaction's index writes: call it before the first one. */
export function beginIndexChanges(db: Db, limits: ListLimits = DEFAULT_LIST_LIMITS): IndexChanges {
  return new IndexChanges(commonListsFresh(db), limits);
}

/** After the transaction's last index write, before its commit: the champion lists follow them. */
export function finishIndexChanges(db: Db, changes: IndexChanges): CommonListsRefresh {
  return refreshCommonLists(db, changes);
}

/** An article's own searchable text, segmented the way queries are (src/search/segment.ts). */
export interface IndexText {
  title: string;
  excerpt: string;
  body: string;
  author: string;
}

type Indexable = Pick<ArticleRecord, 'title' | 'excerpt' | 'body' | 'author'>;

/** The text to index for an article; computed when a record is staged, written when applied. */
export function indexText(article: Indexable): IndexText {
  return {
    title: segmentForIndex(article.title),
    excerpt: segmentForIndex(article.excerpt),
    body: segmentForIndex(article.body),
    author: segmentForIndex(article.author),
  };
}

// A sync indexes thousands of articles under a handful of section names.
const segmentedNames = new Map<string, string>();
function sectionText(name: string): string {
  let text = segmentedNames.get(name);
  if (text === undefined) {
    if (segmentedNames.size > 1_000) segmentedNames.clear();
    text = segmentForIndex(name);
    segmentedNames.set(name, text);
  }
  return text;
}

/**
 * Writes an article's index entry in the caller's transaction, replacing the previous one
 * unless the article is new (deleting from a contentless index is not free).
 */
export function indexArticle(db: Db, changes: IndexChanges, id: number, text: IndexText, sectionName: string, replace = true): void {
  const doc = { ...text, sectionName: sectionText(sectionName) };
  writeFtsDocument(db, id, doc, replace);
  changes.record(id, doc);
}

export function unindexArticle(db: Db, changes: IndexChanges, id: number): void {
  deleteFtsDocument(db, id);
  changes.record(id, null);
}

/** Rewrites the entries of stored articles whose section was renamed (their own text is unchanged). */
export function reindexArticles(db: Db, changes: IndexChanges, ids: Iterable<number>, sectionName: string): void {
  const read = db.$client.prepare<[number], Indexable>('SELECT title, excerpt, body, author FROM articles WHERE id = ?');
  for (const id of ids) {
    const row = read.get(id);
    if (row) indexArticle(db, changes, id, indexText(row), sectionName);
  }
}

const BATCH = 1_000;

/**
 * Empties the index and indexes every stored article again, in the caller's transaction:
 * after a change to how text is segmented, or to repair the index. Rows are read in batches so
 * memory stays flat on a large snapshot. Returns the number of articles indexed.
 */
export function rebuildIndex(db: Db, changes: IndexChanges): number {
  changes.wholeIndex();
  const batch = db.$client.prepare<[number], Indexable & { id: number; section_name: string | null }>(
    `SELECT a.id, a.title, a.excerpt, a.body, a.author, s.name AS section_name
     FROM articles a LEFT JOIN sections s ON s.locale = a.locale AND s.slug = a.section_slug
     WHERE a.id > ? ORDER BY a.id LIMIT ${BATCH}`,
  );
  // The FTS5 command that empties a contentless index.
  db.$client.exec(`INSERT INTO articles_fts (articles_fts) VALUES ('delete-all')`);
  let count = 0;
  let after = 0;
  for (;;) {
    const rows = batch.all(after);
    for (const row of rows) indexArticle(db, changes, row.id, indexText(row), row.section_name ?? '', false);
    count += rows.length;
    if (rows.length < BATCH) return count;
    after = rows[rows.length - 1]!.id;
  }
}
