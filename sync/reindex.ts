import { writeTransaction, type Db } from '../src/db/connection.js';
import { markAllChanged } from '../src/db/snapshot-write.js';
import { ftsDocument, indexArticle } from '../src/search/sqlite-index.js';

const BATCH = 1_000;

type Row = { id: number; title: string; excerpt: string; body: string; author: string; section_name: string | null };

/**
 * Rebuilds the embedded full-text index from the articles table, in one transaction: after a
 * change to how text is segmented, or to repair an index, without calling the CMS. Rows are
 * read in batches so memory stays flat on a large snapshot.
 */
export function rebuildEmbeddedIndex(db: Db, nowIso: string): number {
  const batch = db.$client.prepare<[number], Row>(
    `SELECT a.id, a.title, a.excerpt, a.body, a.author, s.name AS section_name
     FROM articles a LEFT JOIN sections s ON s.locale = a.locale AND s.slug = a.section_slug
     WHERE a.id > ? ORDER BY a.id LIMIT ${BATCH}`,
  );
  return writeTransaction(db, () => {
    // The FTS5 command that empties a contentless index.
    db.$client.exec(`INSERT INTO articles_fts (articles_fts) VALUES ('delete-all')`);
    // Readers cache search results per content version: a rebuilt index is a new version, or a
    // running API would keep serving what it ranked from the old (perhaps broken) index.
    markAllChanged(db, nowIso);
    let count = 0;
    let after = 0;
    for (;;) {
      const rows = batch.all(after);
      for (const row of rows) indexArticle(db, row.id, ftsDocument(row, row.section_name ?? ''));
      count += rows.length;
      if (rows.length < BATCH) return count;
      after = rows[rows.length - 1]!.id;
    }
  });
}
