import { Router, type Request, type Response } from 'express';
import { readChanges } from '../../content/feed.js';
import type { Catalog } from '../../content/catalog.js';
import { getArticleOrFail, hydrate, listArticles, listSections, type ArticlePage } from '../../content/articles.js';
import { reachablePages, searchArticles } from '../../content/search.js';
import { LOCALES, type Locale } from '../../locale.js';
import type { SnapshotStore, StoreSession } from '../../db/snapshot/snapshot-store.js';
import type { SearchEngine } from '../../search/engine.js';
import type { Clock } from '../../lib/time.js';
import { sessionOf } from '../pipeline/api-key.js';
import { contextOf } from '../pipeline/context.js';
import { parseQuery } from '../pipeline/parse-query.js';
import { resolveCategories, resolveChanges, resolveDetail, resolveList } from '../fast/cacheable.js';
import { searchQuery, type ChangesQuery, type SearchQuery } from '../contract/query-schemas.js';
import type { FeedWaits } from './feed-wait.js';
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

  router.get(ROUTES.changes.path, (req, res, next) => {
    const session = sessionOf(res);
    const now = clock();
    const { q, view } = resolveChanges(req, session, catalog, now);
    // `wait` (src/http/routes/feed-wait.ts): an empty page is held until the feed moves.
    const keyId = contextOf(res).key?.id;
    if (waits && q.wait > 0 && keyId !== undefined && feedIsQuiet(session, q, now)) {
      const attempt = (force: boolean): boolean => {
        try {
          const later = store.session();
          const at = clock();
          if (!force && feedIsQuiet(later, q, at)) return false;
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

  /** The change feed's page after `since`, from the cache or read, sent. */
  function sendChanges(req: Request, res: Response, session: StoreSession, now: number): void {
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
  }

  return router;
}

/** Whether the feed has nothing after the query's cursor now (what `wait` waits on). */
function feedIsQuiet(session: StoreSession, q: ChangesQuery, now: number): boolean {
  return readChanges(session, { locale: q.locale, since: q.since, limit: 1, now }).changes.length === 0;
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
 * How many times rehearseSearchResponses builds each of its responses (a different page of
 * hits each time). Once was not enough: V8 optimizes the highlighting code only after a few
 * hundred hits, and did it while answering the third to fifth partner search after a start
 * (33-80 ms of compiling on the one core the API had). Rehearsing one locale after the other
 * also compiled it for the first, threw that away on the second, and compiled it again later.
 */
export const RESPONSE_REHEARSAL_ROUNDS = 12;

/**
 * Builds search responses in-process, and drops them, before the port opens: the newest
 * articles as the hits of words of the newest one's title, from the query string parsed, page
 * after page, both locales in turn, and a query of both locales' words (a third way of finding
 * matches). The first searches after a start otherwise paid for compiling this code, for ICU
 * loading its word-break data (a first `激光` took 12 ms here, later ones 2-3 ms) and for V8
 * optimizing it (see RESPONSE_REHEARSAL_ROUNDS). Returns how many hits it highlighted. Quiet
 * when the snapshot or a locale is missing: a request will say so.
 */
export function rehearseSearchResponses(store: SnapshotStore, catalog: Catalog, now: number, rounds = RESPONSE_REHEARSAL_ROUNDS): number {
  const plans: { locale: Locale; words: string[] }[] = [];
  for (const locale of LOCALES) {
    try {
      const session = store.session();
      const [newest] = hydrate(session, catalog.view(session, locale).all.page(now, 1, 1).ids, now);
      const words = normalizeQuery(newest?.title ?? '').words.slice(0, 2);
      if (words.length > 0) plans.push({ locale, words });
    } catch {
      // Only a rehearsal: see above.
    }
  }
  // Latin and Chinese words together take the general tokenizing path; each alone its own.
  const mixed = plans.map((p) => p.words[0]!).join(' ');
  const asked = [...plans.map((p) => ({ locale: p.locale, q: p.words.join(' ') })), ...(plans.length > 1 ? plans.map((p) => ({ locale: p.locale, q: mixed })) : [])];
  let hits = 0;
  for (let round = 1; round <= rounds; round++) {
    for (const { locale, q: words } of asked) {
      try {
        const session = store.session();
        const articles = hydrate(session, catalog.view(session, locale).all.page(now, round, 20).ids, now);
        // Parsed as the route parses it: zod compiles a schema's parser on its first use, which
        // cost the first search 4 ms.
        const q = parseQuery({ url: `?locale=${locale}&q=${encodeURIComponent(words)}&highlight=true` }, searchQuery);
        searchRepresentation({ articles, total: articles.length }, q);
        hits += articles.length;
      } catch {
        // Only a rehearsal: see above.
      }
    }
  }
  return hits;
}
