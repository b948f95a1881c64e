import type { Locale } from '../../locale.js';

/**
 * The records the worker writes into the snapshot (sync/cms/types.ts re-exports them for
 * the CMS adapters). A CMS adapter maps whatever its CMS sends onto these;
 * nothing past the adapter knows which CMS a record came from. Timestamps are already
 * normalized to `YYYY-MM-DDTHH:MM:SSZ` (UTC, whole seconds).
 */
export interface SectionRecord {
  cmsId: string;
  locale: Locale;
  slug: string;
  name: string;
  description: string | null;
  active: boolean;
  position: number;
  updatedAt: string;
}

export interface ImageRecord {
  url: string;
  alt: string;
  credit: string;
  creditUrl: string;
  sourceUrl: string;
}

export interface ArticleRecord {
  cmsId: string;
  locale: Locale;
  slug: string;
  /** `published` is the only status that is exposed; any other value means "not published". */
  status: string;
  title: string;
  excerpt: string;
  body: string;
  sectionSlug: string | null;
  /** "" when the CMS has no author. */
  author: string;
  image: ImageRecord | null;
  publishedAt: string | null;
  updatedAt: string;
  url: string;
}

