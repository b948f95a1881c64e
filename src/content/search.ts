import { snapshotReplaced, type SnapshotStore } from '../db/snapshot/snapshot-store.js';
import type { SearchEngine, SearchOrder } from '../search/engine.js';
import type { Locale } from '../locale.js';
import { hydrate, type ArticlePage } from './articles.js';
import type { LocaleView } from './locale-view.js';
import { allowsSection, type KeyScope } from '../keys/scope.js';

export interface SearchParams {
  locale: Locale;
  q: string;
  section?: string | undefined;
  page: number;
  limit: number;
  now: number;
  /** The partner's key id: search capacity is shared out by key. */
  keyId?: number | undefined;
  /** published_after (inclusive) and published_before (exclusive), epoch ms. */
  publishedAfterMs?: number | undefined;
  publishedBeforeMs?: number | undefined;
  /** `relevance` (default), `newest` or `oldest` (ties by slug). */
  order?: SearchOrder | undefined;
  /** The key's scope: hits and totals hold only its sections. */
  scope?: KeyScope | null | undefined;
}

/**
 * How deep search results can be paged, on every engine: hits past the 10,000th are never
 * returned. A page that starts past it answers like a page past the last one (no data, the
 * true total and pages); a page that straddles it is cut at it. Ranking cost grows with
 * page × limit on both engines (Meilisearch ranks every hit before the page's last one), and
 * nobody reads that deep: a narrower q or a section finds it sooner.
 */
export const MAX_SEARCH_DEPTH = 10_000;

/**
 * The pages of a search a partner can reach: those that start within the depth cap. A page
 * past it answers `data: []`, so the Link header's next and last stop at the last reachable one.
 */
export function reachablePages(pages: number, limit: number, maxDepth = MAX_SEARCH_DEPTH): number {
  return Math.min(pages, Math.ceil(maxDepth / limit));
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
  maxDepth = MAX_SEARCH_DEPTH,
): Promise<ArticlePage> {
  const within = params.scope?.sections ?? undefined;
  // A section outside the key's scope does not exist for it: no hits, whatever the engine.
  if (params.section !== undefined && !allowsSection(params.scope, params.section)) return { articles: [], total: 0 };
  const offset = (params.page - 1) * params.limit;
  // Past the depth cap the engine is asked for the total only (no hits to rank).
  const beyond = offset >= maxDepth;
  const session = store.session();
  const hits = await engine.search(session, {
    ...params,
    page: beyond ? 1 : params.page,
    limit: beyond ? 0 : params.limit,
    section: params.section,
    activeSections: within === undefined ? view.sectionSlugs : view.sectionSlugs.filter((s) => within.includes(s)),
    within,
    order: params.order ?? 'relevance',
    exposure: view.exposure(params.now, params.section, { afterMs: params.publishedAfterMs, beforeMs: params.publishedBeforeMs }, within),
    contentTag: view.contentTag(params.now),
  });
  const ids = hits.ids.slice(0, Math.max(0, maxDepth - offset));
  // The engine may have awaited a server or a slot: take a fresh session, the old one may be
  // closed. On another connection the file was replaced meanwhile: the ids and the exposure
  // came from the old file, and in a rebuilt one an id can name another article.
  const fresh = store.session();
  if (fresh.connection !== session.connection) throw snapshotReplaced();
  const articles = hydrate(fresh, ids, params.now);
  const dropped = ids.length - articles.length;
  return { articles, total: Math.max(0, hits.total - dropped) };
}
