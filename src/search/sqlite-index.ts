import type { Db } from '../db/connection.js';
import { deleteFtsDocument, writeFtsDocument, type FtsDocument } from '../db/fts.js';
import type { ArticleRecord } from '../db/records.js';
import { segmentForIndex } from './segment.js';

/** The searchable text of an article, segmented the way queries are (src/search/segment.ts). */
export function ftsDocument(article: Pick<ArticleRecord, 'title' | 'excerpt' | 'body' | 'author'>, sectionName: string): FtsDocument {
  return {
    title: segmentForIndex(article.title),
    excerpt: segmentForIndex(article.excerpt),
    body: segmentForIndex(article.body),
    sectionName: segmentForIndex(sectionName),
    author: segmentForIndex(article.author),
  };
}

/** Keeps the embedded index in step with the articles table, inside the same transaction. */
export function indexArticle(db: Db, id: number, doc: FtsDocument, replace = true): void {
  writeFtsDocument(db, id, doc, replace);
}

export function unindexArticle(db: Db, id: number): void {
  deleteFtsDocument(db, id);
}
