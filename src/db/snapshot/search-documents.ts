import { statementsFor, type Db } from '../sqlite/connection.js';
import { SEARCHABLE_WHERE } from './exposure.js';

/** What an external search index stores of an article: searchable text and filter fields. */
export interface SearchDocumentRow {
  id: number;
  locale: string;
  slug: string;
  title: string;
  excerpt: string;
  body: string;
  author: string;
  section_slug: string | null;
  section_name: string | null;
  published_at: string | null;
}

const COLUMNS = `a.id, a.locale, a.slug, a.title, a.excerpt, a.body, a.author, a.section_slug,
  s.name AS section_name, a.published_at`;
const FROM = `FROM articles a LEFT JOIN sections s ON s.locale = a.locale AND s.slug = a.section_slug`;
// Only what may ever be exposed is indexed; each search filters the rest (exposure.ts).

const prepared = statementsFor((sqlite) => ({
  after: sqlite.prepare<[string, number, number], SearchDocumentRow>(
    `SELECT ${COLUMNS} ${FROM} WHERE a.locale = ? AND a.id > ? AND ${SEARCHABLE_WHERE} ORDER BY a.id LIMIT ?`,
  ),
  byIds: sqlite.prepare<[string], SearchDocumentRow>(
    `SELECT ${COLUMNS} ${FROM} WHERE a.id IN (SELECT value FROM json_each(?)) AND ${SEARCHABLE_WHERE}`,
  ),
}));

/** Articles of a locale with an id above `afterId`, in id order: a whole index, batch by batch. */
export function searchDocumentsAfter(db: Db, locale: string, afterId: number, limit: number): SearchDocumentRow[] {
  return prepared(db).after.all(locale, afterId, limit);
}

/** The articles among `ids` that still exist and are published (others were removed since). */
export function searchDocumentsByIds(db: Db, ids: readonly number[]): SearchDocumentRow[] {
  if (ids.length === 0) return [];
  return prepared(db).byIds.all(JSON.stringify(ids));
}
