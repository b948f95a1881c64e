import { Router, type Request, type Response } from 'express';
import { readChanges } from '../../content/feed.js';
import { readScopedChanges } from '../../content/scoped-feed.js';
import type { Catalog } from '../../content/catalog.js';
import { getArticleOrFail, listArticles, listSections } from '../../content/articles.js';
import type { LocaleView } from '../../content/locale-view.js';
import { searchArticles } from '../../content/search.js';
import type { SnapshotStore, StoreSession } from '../../db/snapshot/snapshot-store.js';
import type { KeyScope } from '../../keys/scope.js';
import type { SearchEngine } from '../../search/engine.js';
import type { Clock } from '../../lib/time.js';
import { sessionOf } from '../pipeline/api-key.js';
import { contextOf } from '../pipeline/context.js';
import { resolveCached } from '../cache/cacheable.js';
import { represent, sendRepresentation, type Representation, type ResponseCache } from '../cache/representation.js';
import { ROUTES } from '../endpoints/routes-table.js';
import { pageMeta, pickDetail, toArticle, toChange, toSection } from '../contract/serializers.js';
import { pick } from '../contract/fields.js';
import { checkPublishedRange, type ChangesQuery } from '../endpoints/query-schemas.js';
import { searchRepresentation } from '../contract/search-representation.js';
import type { FeedWaits } from './feed-wait.js';

export interface ContentDeps {
  store: SnapshotStore;
  catalog: Catalog;
  engine: SearchEngine;
  cache: ResponseCache;
  clock: Clock;
  /** Holds the change feed's waiting requests (`wait`); without it `wait` is ignored. */
  waits?: FeedWaits;
}

/**
 * The four partner endpoints. Each parses its query with its schema, takes the locale's view
 * of the snapshot, and answers from the response cache, keyed by the request and the view's
 * content tag, so repeated pages cost no query at all.
 */
export function contentRoutes({ store, catalog, engine, cache, clock, waits }: ContentDeps): Router {
  const router = Router();

  router.get(ROUTES.articles.path, (req, res) => {
    const session = sessionOf(res);
    const now = clock();
    const scope = contextOf(res).key?.scope;
    const { q, view, key } = resolveCached(ROUTES.articles, req, session, catalog, now, undefined, scope);
    checkPublishedRange(q);
    const rep = cache.remember(key, () => {
      const result = listArticles(session, view, {
        section: q.section,
        page: q.page,
        limit: q.limit,
        now,
        updatedSinceMs: q.updated_since,
        publishedAfterMs: q.published_after,
        publishedBeforeMs: q.published_before,
        oldest: q.order === 'oldest',
        scope,
      });
      const meta = pageMeta(result, q.page, q.limit, q.locale);
      return represent({ data: result.articles.map((row) => pick(toArticle(row), q.fields)), meta }, { page: meta.page, pages: meta.pages });
    });
    sendRepresentation(req, res, rep, view.lastModified(now));
  });

  router.get(ROUTES.article.path, (req, res) => {
    const slug = req.params.slug as string;
    const session = sessionOf(res);
    const now = clock();
    const scope = contextOf(res).key?.scope;
    const { q, view, key } = resolveCached(ROUTES.article, req, session, catalog, now, slug, scope);
    const rep = cache.remember(key, () => {
      return represent({ data: pickDetail(getArticleOrFail(session, q.locale, slug, now, scope), q.fields) });
    });
    sendRepresentation(req, res, rep, view.lastModified(now));
  });

  router.get(ROUTES.categories.path, (req, res) => {
    const now = clock();
    const scope = contextOf(res).key?.scope;
    const { q, view, key } = resolveCached(ROUTES.categories, req, sessionOf(res), catalog, now, undefined, scope);
    const rep = cache.remember(key, () => {
      const sections = listSections(view, now, scope);
      return represent({ data: sections.map(toSection), meta: { total: sections.length, locale: q.locale } });
    });
    sendRepresentation(req, res, rep, view.lastModified(now));
  });

  router.get(ROUTES.changes.path, (req, res, next) => {
    const session = sessionOf(res);
    const now = clock();
    const scope = contextOf(res).key?.scope;
    const { q, view } = resolveCached(ROUTES.changes, req, session, catalog, now, undefined, scope);
    // `wait` (src/http/routes/feed-wait.ts): an empty page is held until the feed moves.
    const keyId = contextOf(res).key?.id;
    if (waits && q.wait > 0 && keyId !== undefined && feedIsQuiet(session, view, scope, q, now)) {
      const attempt = (force: boolean): boolean => {
        try {
          const later = store.session();
          const at = clock();
          if (!force && feedIsQuiet(later, catalog.view(later, q.locale), scope, q, at)) return false;
          sendChanges(req, res, later, at);
        } catch (error) {
          next(error);
        }
        return true;
      };
      if (waits.enter({ keyId, locale: q.locale, res, tag: view.contentTag(now), waitMs: q.wait * 1000, attempt })) return;
    }
    sendChanges(req, res, session, now);
  });

  router.get(ROUTES.search.path, async (req, res) => {
    const scope = contextOf(res).key?.scope;
    const now = clock();
    const { q, view, key } = resolveCached(ROUTES.search, req, sessionOf(res), catalog, now, undefined, scope);
    checkPublishedRange(q);
    const make = async (): Promise<Representation> => {
      // The key checked by requireApiKey: admission control shares search out by key.
      const result = await searchArticles(store, view, engine, {
        locale: q.locale,
        q: q.q,
        section: q.section,
        page: q.page,
        limit: q.limit,
        now,
        keyId: contextOf(res).key?.id,
        publishedAfterMs: q.published_after,
        publishedBeforeMs: q.published_before,
        order: q.order,
        scope,
      });
      return searchRepresentation(result, q);
    };
    // An external engine can change without the snapshot changing: only the embedded one's
    // results may be cached by the snapshot's content tag.
    const rep = engine.followsSnapshot
      ? await cache.rememberAsync(key, make)
      : await make();
    sendRepresentation(req, res, rep, view.lastModified(now));
  });

  /** The change feed's page after `since`, from the cache or read, sent. */
  function sendChanges(req: Request, res: Response, session: StoreSession, now: number): void {
    const scope = contextOf(res).key?.scope;
    const { q, view, key } = resolveCached(ROUTES.changes, req, session, catalog, now, undefined, scope);
    // A page held back to a sync's pending mark is dated at the mark: dated `now`, it would
    // count a scheduled article it leaves out, and a partner revalidating by date would get a
    // 304 for the page that has it.
    let asOf = now;
    const rep = cache.remember(key, () => {
      const page = readFeed(session, view, scope, q, now, q.limit);
      asOf = page.asOf;
      return represent(
        {
          data: page.changes.map((change) => toChange(change, q.fields)),
          meta: { locale: q.locale, limit: q.limit, since: q.since ?? null, next: page.next, has_more: page.hasMore },
        },
        undefined,
        // Held back to a sync's pending mark: the cache key (the content tag) does not follow
        // the mark, so a kept page could hide a due scheduled article after the sync.
        { transient: page.heldBack },
      );
    });
    sendRepresentation(req, res, rep, view.lastModified(asOf));
  }

  return router;
}

/** The change feed after the query's cursor, as the key sees it (its scope, if it has one). */
function readFeed(session: StoreSession, view: LocaleView, scope: KeyScope | null | undefined, q: ChangesQuery, now: number, limit: number) {
  const query = { locale: q.locale, since: q.since, limit, now };
  return scope ? readScopedChanges(session, view, scope, query) : readChanges(session, query);
}

/** Whether the feed has nothing after the query's cursor now (what `wait` waits on). */
function feedIsQuiet(session: StoreSession, view: LocaleView, scope: KeyScope | null | undefined, q: ChangesQuery, now: number): boolean {
  return readFeed(session, view, scope, q, now, 1).changes.length === 0;
}
