import { Router } from 'express';
import { readChanges } from '../../content/feed.js';
import type { Catalog } from '../../content/catalog.js';
import { getArticleOrFail, hydrate, listArticles, listSections, type ArticlePage } from '../../content/articles.js';
import { reachablePages, searchArticles } from '../../content/search.js';
import { LOCALES } from '../../locale.js';
import type { SnapshotStore } from '../../db/snapshot/snapshot-store.js';
import type { SearchEngine } from '../../search/engine.js';
import type { Clock } from '../../lib/time.js';
import { sessionOf } from '../pipeline/api-key.js';
import { contextOf } from '../pipeline/context.js';
import { parseQuery } from '../pipeline/parse-query.js';
import { resolveCategories, resolveChanges, resolveDetail, resolveList } from '../fast/cacheable.js';
import { searchQuery, type SearchQuery } from '../contract/query-schemas.js';
import { represent, sendRepresentation, type Representation, type ResponseCache } from '../fast/representation.js';
import { ROUTES } from './routes-table.js';
import { pageMeta, toArticle, toArticleDetail, toChange, toSearchHit, toSection } from '../contract/serializers.js';
import { normalizeQuery } from '../../search/normalize.js';
import { queryWordsOf } from '../../search/highlight.js';

export interface ContentDeps {
  store: SnapshotStore;
  catalog: Catalog;
  engine: SearchEngine;
  cache: ResponseCache;
  clock: Clock;
}

/**
 * The four partner endpoints. Each parses its query with its schema, takes the locale's view
 * of the snapshot, and answers from the response cache, keyed by the request and the view's
 * content tag, so repeated pages cost no query at all.
 */
export function contentRoutes({ store, catalog, engine, cache, clock }: ContentDeps): Router {
  const router = Router();

  router.get(ROUTES.articles.path, (req, res) => {
    const session = sessionOf(res);
    const now = clock();
    const { q, view, key } = resolveList(req, session, catalog, now);
    const rep = cache.remember(key, () => {
      const result = listArticles(session, view, { section: q.section, page: q.page, limit: q.limit, now, updatedSinceMs: q.updated_since });
      const meta = pageMeta(result, q.page, q.limit, q.locale);
      return represent({ data: result.articles.map(toArticle), meta }, { page: meta.page, pages: meta.pages });
    });
    sendRepresentation(req, res, rep, view.lastModified(now));
  });

  router.get(ROUTES.article.path, (req, res) => {
    const slug = req.params.slug as string;
    const session = sessionOf(res);
    const now = clock();
    const { q, view, key } = resolveDetail(req, slug, session, catalog, now);
    const rep = cache.remember(key, () => {
      return represent({ data: toArticleDetail(getArticleOrFail(session, q.locale, slug, now)) });
    });
    sendRepresentation(req, res, rep, view.lastModified(now));
  });

  router.get(ROUTES.categories.path, (req, res) => {
    const now = clock();
    const { q, view, key } = resolveCategories(req, sessionOf(res), catalog, now);
    const rep = cache.remember(key, () => {
      const sections = listSections(view, now);
      return represent({ data: sections.map(toSection), meta: { total: sections.length, locale: q.locale } });
    });
    sendRepresentation(req, res, rep, view.lastModified(now));
  });

  router.get(ROUTES.changes.path, (req, res) => {
    const session = sessionOf(res);
    const now = clock();
    const { q, view, key } = resolveChanges(req, session, catalog, now);
    // A page held back to a sync's pending mark is dated at the mark: dated `now`, it would
    // count a scheduled article it leaves out, and a partner revalidating by date would get a
    // 304 for the page that has it.
    let asOf = now;
    const rep = cache.remember(key, () => {
      const page = readChanges(session, { locale: q.locale, since: q.since, limit: q.limit, now });
      asOf = page.asOf;
      return represent(
        {
          data: page.changes.map(toChange),
          meta: { locale: q.locale, limit: q.limit, since: q.since ?? null, next: page.next, has_more: page.hasMore },
        },
        undefined,
        // Held back to a sync's pending mark: the cache key (the content tag) does not follow
        // the mark, so a kept page could hide a due scheduled article after the sync.
        { transient: page.heldBack },
      );
    });
    sendRepresentation(req, res, rep, view.lastModified(asOf));
  });

  router.get(ROUTES.search.path, async (req, res) => {
    const q = parseQuery(req, searchQuery);
    const now = clock();
    const view = catalog.view(sessionOf(res), q.locale);
    const make = async (): Promise<Representation> => {
      // The key checked by requireApiKey: admission control shares search out by key.
      const result = await searchArticles(store, view, engine, { ...q, now, keyId: contextOf(res).key?.id });
      return searchRepresentation(result, q);
    };
    // An external engine can change without the snapshot changing: only the embedded one's
    // results may be cached by the snapshot's content tag.
    const rep = engine.followsSnapshot
      ? await cache.rememberAsync(
          `search|${q.locale}|${q.page}|${q.limit}|${q.highlight}|${view.contentTag(now)}|${JSON.stringify([q.section ?? null, q.q])}`,
          make,
        )
      : await make();
    sendRepresentation(req, res, rep, view.lastModified(now));
  });

  return router;
}

/** A search's response: its hits (with their highlights when asked for) and the page's meta. */
function searchRepresentation(result: ArticlePage, q: SearchQuery): Representation {
  const meta = pageMeta(result, q.page, q.limit, q.locale);
  const { words } = normalizeQuery(q.q);
  const marked = q.highlight === 'true' ? queryWordsOf(words) : undefined;
  return represent(
    { data: result.articles.map((row) => toSearchHit(row, marked)), meta: { ...meta, q: q.q, words } },
    { page: meta.page, pages: reachablePages(meta.pages, q.limit) },
  );
}

/**
 * Builds a search response of each locale in-process, and drops it, before the port opens: the
 * newest articles as the hits of two words of the newest one's title, from the query string
 * parsed. The first searches after a start otherwise paid for compiling this code and for ICU
 * loading its word-break data, the Chinese dictionary most (a first `激光` took 12 ms here,
 * later ones 2-3 ms). Quiet when the snapshot or a locale is missing: a request will say so.
 */
export function rehearseSearchResponses(store: SnapshotStore, catalog: Catalog, now: number): void {
  for (const locale of LOCALES) {
    try {
      const session = store.session();
      const articles = hydrate(session, catalog.view(session, locale).all.page(now, 1, 20).ids, now);
      const words = normalizeQuery(articles[0]?.title ?? '').words.slice(0, 2).join(' ');
      if (words === '') continue;
      // Parsed as the route parses it: zod compiles a schema's parser on its first use, which
      // cost the first search 4 ms.
      const q = parseQuery({ url: `?locale=${locale}&q=${encodeURIComponent(words)}&highlight=true` }, searchQuery);
      searchRepresentation({ articles, total: articles.length }, q);
    } catch {
      // Only a rehearsal: see above.
    }
  }
}
