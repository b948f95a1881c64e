import type { SearchDocumentRow } from '../../db/search-documents.js';
import { parseIsoToMs } from '../../time.js';

export interface MeiliDocument {
  id: number;
  slug: string;
  title: string;
  excerpt: string;
  body: string;
  section_slug: string | null;
  section_name: string;
  author: string;
  /** Epoch seconds, for the `published_at_ts <= now` filter and the newest-first tie-break. */
  published_at_ts: number | null;
}

export function toMeiliDocument(row: SearchDocumentRow): MeiliDocument {
  const published = row.published_at === null ? undefined : parseIsoToMs(row.published_at);
  return {
    id: row.id,
    slug: row.slug,
    title: row.title,
    excerpt: row.excerpt,
    body: row.body,
    section_slug: row.section_slug,
    section_name: row.section_name ?? '',
    author: row.author,
    published_at_ts: published === undefined ? null : Math.floor(published / 1000),
  };
}
