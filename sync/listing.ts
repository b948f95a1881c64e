import type { Logger } from '../src/logger.js';
import type { Locale } from '../src/locale.js';
import type { CmsArticlePage, CmsArticlePageQuery, CmsAdapter, RejectedRecord } from './cms/types.js';
import type { RemovalCandidate, Staging } from './staging.js';

/**
 * No listing of ours is longer (10 million records at 100 a page): a CMS that claims more pages
 * and keeps answering would otherwise hold the worker, every later sync and every takedown, for
 * ever. Past it the run fails, and says why.
 */
export const MAX_LISTING_PAGES = 100_000;

/**
 * The pages of one listing, in order, until the CMS's last page or an empty one, and never past
 * MAX_LISTING_PAGES. Every read of a listing here goes through it; a caller may stop early.
 */
async function* listingPages(
  cms: CmsAdapter,
  query: Omit<CmsArticlePageQuery, 'page'>,
  signal: AbortSignal | undefined,
): AsyncGenerator<{ page: number; response: CmsArticlePage }> {
  for (let page = 1; ; page += 1) {
    signal?.throwIfAborted();
    if (page > MAX_LISTING_PAGES) {
      throw new Error(`the CMS listed more than ${MAX_LISTING_PAGES} pages of ${query.locale} articles; the run stops`);
    }
    const response = await cms.listArticles({ ...query, page }, signal);
    yield { page, response };
    if (page >= response.pages || response.articles.length + response.rejected.length === 0) return;
  }
}

// Removal candidates looked up one by one up to this many; past it, one sweep costs less.
const CANDIDATE_LOOKUPS = 50;
// A candidate's lookup needs the few records changed at its instant: small pages suffice.
const LOOKUP_PAGE_SIZE = 10;

export interface ListingQuery {
  locale: Locale;
  perPage: number;
  publishedOnly: boolean;
  updatedSince?: string;
}

export interface ListingResult {
  pages: number;
  records: number;
  /** Rejected records, keyed by CMS id (or position when the id was unreadable). */
  rejected: Set<string>;
  /** A rejected record without a readable id: the listing cannot prove what is gone. */
  rejectedWithoutId: boolean;
  /**
   * False when the CMS changed while we paged: a record seen twice (it moved to the end after
   * an update) or a total that moved. Pages then shift, and a record can be skipped.
   */
  stable: boolean;
}

/**
 * Reads every page of one article listing into the staging table. Pages are requested until
 * the CMS's own page count, so a listing that grows while we read is read to its new end.
 */
export async function stageListing(
  cms: CmsAdapter,
  staging: Staging,
  query: ListingQuery,
  options: { signal?: AbortSignal; logger: Logger; onPage?: (records: number) => void },
): Promise<ListingResult> {
  const result: ListingResult = { pages: 0, records: 0, rejected: new Set(), rejectedWithoutId: false, stable: true };
  const seen = new Set<string>();
  let firstTotal: number | undefined;
  const pages = listingPages(cms, { locale: query.locale, perPage: query.perPage, publishedOnly: query.publishedOnly, updatedSince: query.updatedSince }, options.signal);
  for await (const { page, response } of pages) {
    result.pages += 1;
    result.records += response.articles.length;
    firstTotal ??= response.total;
    if (response.total !== firstTotal) result.stable = false;
    let fresh = 0;
    for (const article of response.articles) {
      if (seen.has(article.cmsId)) result.stable = false;
      else fresh += 1;
      seen.add(article.cmsId);
    }
    const withId: Array<{ cmsId: string; status: string | null }> = [];
    for (const [i, rejected] of response.rejected.entries()) {
      options.logger.warn(
        { locale: query.locale, cmsId: rejected.cmsId, page, reason: rejected.reason },
        `rejected CMS record ${rejected.cmsId ?? '(unreadable id)'}: ${rejected.reason}`,
      );
      if (rejected.cmsId === null) {
        result.rejectedWithoutId = true;
        result.rejected.add(`${page}#${i}`);
      } else {
        withId.push({ cmsId: rejected.cmsId, status: rejected.status });
        result.rejected.add(rejected.cmsId);
      }
    }
    staging.stagePage(query.locale, response.articles, withId);
    options.onPage?.(response.articles.length + response.rejected.length);
    // A whole page of records already read: no shift moves a page's worth, the CMS is
    // repeating itself (claiming pages it does not have). Stop; the listing is unsettled.
    if (response.articles.length > 0 && fresh === 0 && response.rejected.length === 0) return result;
  }  return result;
}

/**
 * Whether the CMS changed while a published-only listing was read, in a way the listing itself
 * cannot show: one record unpublished (the pages shift back, so a record is skipped) while
 * another is published (so the total does not move). The changes since the listing began
 * tell: a published record the listing did not see at that version, or a record the listing
 * saw published that is not published any more. `since` must be at or before the listing's
 * start; earlier only costs a longer answer, not a wrong one. A full sync asks from the
 * incremental cursor when that is earlier: a record edited since the last sync, then skipped by a
 * shift, is then a published record the listing did not see at that version.
 */
export async function changedDuringListing(
  cms: CmsAdapter,
  staging: Staging,
  query: { locale: Locale; perPage: number; since: string },
  signal?: AbortSignal,
): Promise<boolean> {
  for await (const { response } of listingPages(cms, { locale: query.locale, perPage: query.perPage, updatedSince: query.since }, signal)) {
    for (const article of response.articles) {
      const seen = staging.seen(query.locale, article.cmsId);
      if (article.status === 'published') {
        if (!seen || seen.kind === 'remove' || seen.updatedAt < article.updatedAt) return true;
      } else if (seen && seen.kind !== 'remove') {
        return true;
      }
    }
    if (response.rejected.some((r) => rejectedShowsChange(staging, query.locale, r))) return true;
  }
  return false;
}

/**
 * A rejected record among the changes, judged like a valid one as far as it can be read. Without
 * a readable id it could be any record, so it counts as a change. With one, only what the listing
 * got wrong counts: a published record it did not see, or a takedown it staged to keep. A draft an
 * editor left invalid does not, or every full sync would re-read the catalogue while it lasts; a
 * skipped record that did not change is what the removal candidates' check finds.
 */
function rejectedShowsChange(staging: Staging, locale: Locale, rejected: RejectedRecord): boolean {
  if (rejected.cmsId === null) return true;
  const seen = staging.seen(locale, rejected.cmsId);
  if (rejected.status === 'published') return seen === undefined;
  if (rejected.status !== null) return seen !== undefined && seen.kind !== 'remove';
  return false;
}

/**
 * Whether a stored article that a full listing lacks is still published after all: a record
 * deleted outright between two pages shifts the later ones back, so the first of the next page
 * is never read, and a publication elsewhere keeps the total; the changes cannot show a hard
 * delete. The listing is ordered by updated_at then id, so a candidate still published with the
 * updated_at it was stored with is among the first records of `updated_since=<that updated_at>`.
 * (A candidate edited since it was stored is newer than the snapshot: changedDuringListing,
 * asked from the incremental cursor, sees it.) Up to CANDIDATE_LOOKUPS candidates are looked
 * up one by one; more are checked in one sweep from the earliest to the latest of them.
 */
export async function anyCandidateListed(
  cms: CmsAdapter,
  query: { locale: Locale; perPage: number },
  candidates: RemovalCandidate[],
  signal?: AbortSignal,
): Promise<boolean> {
  const first = candidates[0];
  const last = candidates.at(-1);
  if (!first || !last) return false;
  if (candidates.length > CANDIDATE_LOOKUPS) {
    const ids = new Set(candidates.map((c) => c.cmsId));
    return publishedBetween(cms, query, { from: first.updatedAt, to: last.updatedAt, matches: (id) => ids.has(id) }, signal);
  }
  const perPage = Math.min(query.perPage, LOOKUP_PAGE_SIZE);
  for (const candidate of candidates) {
    const range = { from: candidate.updatedAt, to: candidate.updatedAt, matches: (id: string) => id === candidate.cmsId };
    if (await publishedBetween(cms, { locale: query.locale, perPage }, range, signal)) return true;
  }
  return false;
}

/**
 * Pages the published listing from `from` until its records pass `to`: whether a record of that
 * span (rejected ones by their id) matches.
 */
async function publishedBetween(
  cms: CmsAdapter,
  query: { locale: Locale; perPage: number },
  range: { from: string; to: string; matches: (cmsId: string) => boolean },
  signal?: AbortSignal,
): Promise<boolean> {
  const published = { locale: query.locale, perPage: query.perPage, publishedOnly: true, updatedSince: range.from };
  for await (const { response } of listingPages(cms, published, signal)) {
    if (response.articles.some((a) => range.matches(a.cmsId))) return true;
    if (response.rejected.some((r) => r.cmsId !== null && range.matches(r.cmsId))) return true;
    const newest = response.articles.at(-1);
    if (newest && newest.updatedAt > range.to) return false;
  }
  return false;
}
