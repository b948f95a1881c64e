import {
  exposedArticleBySlug,
  exposedArticlesByIds,
  type ArticleWithSection,
  type SectionListRow,
} from '../db/snapshot/content.js';
import type { StoreSession } from '../db/snapshot/snapshot-store.js';
import type { Locale } from '../locale.js';
import { formatUtcSeconds } from '../lib/time.js';
import { ArticleRemovedError, NotFoundError } from '../errors.js';
import { wasRemoved } from './feed.js';
import type { LocaleView } from './locale-view.js';
import { allowsSection, type KeyScope } from '../keys/scope.js';
import { Ordering } from '../db/snapshot/ordering.js';

const NOTHING = new Ordering([], []);

/**
 * The articles a list shows: the section asked for or all, as far as the key's scope lets it
 * see (a section outside its scope is an empty list, as if it did not exist).
 */
export function orderingFor(view: LocaleView, scope: KeyScope | null | undefined, section: string | undefined): Ordering {
  if (section !== undefined) return allowsSection(scope, section) ? view.section(section) : NOTHING;
  return scope?.sections ? view.within(scope.sections) : view.all;
}

export interface ArticlePage {
  articles: ArticleWithSection[];
  total: number;
}

export interface SectionSummary extends SectionListRow {
  articleCount: number;
}

/** Loads the exposed articles among `ids`, keeping the order of `ids`. */
export function hydrate(session: StoreSession, ids: readonly number[], now: number): ArticleWithSection[] {
  const rows = exposedArticlesByIds(session.db, ids, formatUtcSeconds(now));
  const byId = new Map(rows.map((r) => [r.id, r]));
  const ordered: ArticleWithSection[] = [];
  for (const id of ids) {
    const row = byId.get(id);
    if (row) ordered.push(row);
  }
  return ordered;
}

/**
 * One page of the article list, newest (or oldest) first, within the published bounds; a page
 * past the last is empty with the true total.
 */
export function listArticles(
  session: StoreSession,
  view: LocaleView,
  query: {
    section: string | undefined;
    page: number;
    limit: number;
    now: number;
    updatedSinceMs?: number | undefined;
    publishedAfterMs?: number | undefined;
    publishedBeforeMs?: number | undefined;
    oldest?: boolean;
    scope?: KeyScope | null | undefined;
  },
): ArticlePage {
  const ordering = orderingFor(view, query.scope, query.section);
  const { ids, total } = view.page(
    ordering,
    query.now,
    { afterMs: query.publishedAfterMs, beforeMs: query.publishedBeforeMs, oldest: query.oldest ?? false, updatedSinceMs: query.updatedSinceMs },
    query.page,
    query.limit,
  );
  return { articles: hydrate(session, ids, query.now), total };
}

/** The article, or the error for its absence: taken down (its delete retained) or unknown. */
export function getArticleOrFail(session: StoreSession, locale: Locale, slug: string, now: number, scope?: KeyScope | null): ArticleWithSection {
  const row = getArticle(session, locale, slug, now);
  // Outside the key's sections the article answers as if it did not exist.
  if (row && !allowsSection(scope, row.section_slug)) throw new NotFoundError(`No published article has the slug ${echoed(slug)} in locale ${locale}.`);
  if (row) return row;
  if (wasRemoved(session, locale, slug, now)) {
    throw new ArticleRemovedError(`The article "${slug}" was taken down in locale ${locale}; remove it from your copy.`);
  }
  throw new NotFoundError(`No published article has the slug ${echoed(slug)} in locale ${locale}.`);
}

/** A slug as an error message repeats it: an unknown one can be as long as the request line. */
function echoed(slug: string): string {
  return slug.length <= 120 ? `"${slug}"` : `"${slug.slice(0, 100)}…" (${slug.length} characters)`;
}

export function getArticle(
  session: StoreSession,
  locale: Locale,
  slug: string,
  now: number,
): ArticleWithSection | undefined {
  return exposedArticleBySlug(session.db, locale, slug, formatUtcSeconds(now));
}

/** Active sections in editorial order, each with the number of articles exposed now. */
export function listSections(view: LocaleView, now: number, scope?: KeyScope | null): SectionSummary[] {
  return view.sections
    .filter((s) => allowsSection(scope, s.slug))
    .map((s) => ({ ...s, articleCount: view.section(s.slug).visibleCount(now) }));
}
