import type { Logger } from '../src/logger.js';
import type { Locale } from '../src/locale.js';
import type { CmsAdapter } from './cms/types.js';
import type { Staging } from './staging.js';

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
  for (let page = 1; ; page += 1) {
    options.signal?.throwIfAborted();
    const response = await cms.listArticles(
      { locale: query.locale, page, perPage: query.perPage, publishedOnly: query.publishedOnly, updatedSince: query.updatedSince },
      options.signal,
    );
    result.pages += 1;
    result.records += response.articles.length;
    firstTotal ??= response.total;
    if (response.total !== firstTotal) result.stable = false;
    for (const article of response.articles) {
      if (seen.has(article.cmsId)) result.stable = false;
      seen.add(article.cmsId);
    }
    const kept: string[] = [];
    for (const [i, rejected] of response.rejected.entries()) {
      options.logger.warn(
        { locale: query.locale, cmsId: rejected.cmsId, page, reason: rejected.reason },
        `rejected CMS record ${rejected.cmsId ?? '(unreadable id)'}: ${rejected.reason}`,
      );
      if (rejected.cmsId === null) {
        result.rejectedWithoutId = true;
        result.rejected.add(`${page}#${i}`);
      } else {
        kept.push(rejected.cmsId);
        result.rejected.add(rejected.cmsId);
      }
    }
    staging.stagePage(query.locale, response.articles, kept);
    options.onPage?.(response.articles.length + response.rejected.length);
    if (page >= response.pages || response.articles.length + response.rejected.length === 0) return result;
  }
}

/**
 * Whether the CMS changed while a published-only listing was read, in a way the listing itself
 * cannot show: one record unpublished (the pages shift back, so a record is skipped) while
 * another is published (so the total does not move). The changes since the listing began
 * tell: a published record the listing did not see at that version, or a record the listing
 * saw published that is not published any more. `since` must be at or before the listing's
 * start; earlier only costs a longer answer, not a wrong one.
 */
export async function changedDuringListing(
  cms: CmsAdapter,
  staging: Staging,
  query: { locale: Locale; perPage: number; since: string },
  signal?: AbortSignal,
): Promise<boolean> {
  for (let page = 1; ; page += 1) {
    const response = await cms.listArticles(
      { locale: query.locale, page, perPage: query.perPage, updatedSince: query.since },
      signal,
    );
    for (const article of response.articles) {
      const seen = staging.seen(query.locale, article.cmsId);
      if (article.status === 'published') {
        if (!seen || seen.kind === 'remove' || seen.updatedAt < article.updatedAt) return true;
      } else if (seen && seen.kind !== 'remove') {
        return true;
      }
    }
    if (response.rejected.length > 0) return true;
    if (page >= response.pages || response.articles.length === 0) return false;
  }
}
