import type { SnapshotStore } from '../db/snapshot-store.js';
import type { SearchEngine } from '../search/engine.js';
import type { Locale } from '../locale.js';
import { hydrate, type ArticlePage } from './articles.js';
import type { LocaleView } from './locale-view.js';

export interface SearchParams {
  locale: Locale;
  q: string;
  section?: string | undefined;
  page: number;
  limit: number;
  now: number;
  /** The partner's key id: search capacity is shared out by key. */
  keyId?: number | undefined;
}

/**
 * Searches with the configured engine, then loads the rows from the snapshot: search engines
 * return ids only, so search and list never disagree, and a hit the snapshot does not expose
 * (unpublished, scheduled, in an inactive section) is dropped and taken off the total.
 */
export async function searchArticles(
  store: SnapshotStore,
  view: LocaleView,
  engine: SearchEngine,
  params: SearchParams,
): Promise<ArticlePage> {
  const hits = await engine.search(store.session(), {
    ...params,
    section: params.section,
    activeSections: view.sectionSlugs,
    exposure: view.exposure(params.now, params.section),
    contentTag: view.contentTag(params.now),
  });
  // The engine may have awaited a server: take a fresh session, the old one may be closed.
  const articles = hydrate(store.session(), hits.ids, params.now);
  const dropped = hits.ids.length - articles.length;
  return { articles, total: Math.max(0, hits.total - dropped) };
}
