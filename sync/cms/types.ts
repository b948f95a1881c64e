import type { Locale } from '../../src/locale.js';

export type { ArticleRecord, ImageRecord, SectionRecord } from '../../src/db/snapshot/records.js';
import type { ArticleRecord, SectionRecord } from '../../src/db/snapshot/records.js';

/**
 * A record the adapter could not accept; `cmsId` is null when even the id was unreadable, and
 * `status` when the status was (always null for sections, which have none). A readable status
 * other than `published` is a takedown whatever else is wrong with the record.
 */
export interface RejectedRecord {
  cmsId: string | null;
  status: string | null;
  reason: string;
}

export interface SectionList {
  sections: SectionRecord[];
  rejected: RejectedRecord[];
}

export interface CmsArticlePage {
  articles: ArticleRecord[];
  rejected: RejectedRecord[];
  page: number;
  perPage: number;
  total: number;
  pages: number;
}

export interface CmsArticlePageQuery {
  locale: Locale;
  page: number;
  perPage: number;
  /** Only articles whose status is `published` (a full sync). */
  publishedOnly?: boolean;
  /** Every article of any status changed at or after this instant (an incremental sync). */
  updatedSince?: string;
}

/** What the worker needs from a CMS. Errors are thrown as CmsError. */
export interface CmsAdapter {
  listSections(locale: Locale, signal?: AbortSignal): Promise<SectionList>;
  listArticles(query: CmsArticlePageQuery, signal?: AbortSignal): Promise<CmsArticlePage>;
}
