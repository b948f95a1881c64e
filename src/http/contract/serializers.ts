import type { ArticlePage, SectionSummary } from '../../content/articles.js';
import type { FeedChange } from '../../content/feed.js';
import type { ArticleWithSection } from '../../db/snapshot/content.js';
import type { Locale } from '../../locale.js';
import { formatUtcSeconds } from '../../lib/time.js';
import { highlight, type QueryWord } from '../../search/highlight.js';
import { renderBody } from '../../content/body-render.js';
import { pick as pickFields } from './fields.js';
import type { Article, ArticleDetail, Change, SearchHit, Section } from './response-schemas.js';

/*
 * The public contract: each function picks the partner-facing fields one by one, so no
 * internal column (ids, status, hashes) can ever leak into a response.
 */

export function toArticle(row: ArticleWithSection): Article {
  return {
    slug: row.slug,
    locale: row.locale,
    title: row.title,
    excerpt: row.excerpt,
    section: { slug: row.section_slug, name: row.section_name },
    author: row.author,
    image:
      row.image_url === null
        ? null
        : {
            url: row.image_url,
            alt: row.image_alt ?? '',
            credit: row.image_credit ?? '',
            credit_url: row.image_credit_url ?? '',
            source_url: row.image_source_url ?? '',
          },
    published_at: row.published_at,
    updated_at: row.updated_at,
    url: row.url,
  };
}

export function toArticleDetail(row: ArticleWithSection): ArticleDetail {
  return { ...toArticle(row), body: row.body };
}

/** The detail: `body_html` and `body_text` are rendered only when asked for. */
export function pickDetail(row: ArticleWithSection, fields: readonly string[] | undefined): ArticleDetail {
  const detail: ArticleDetail & { body_html?: string; body_text?: string } = toArticleDetail(row);
  if (fields === undefined) return detail;
  if (fields.includes('body_html') || fields.includes('body_text')) {
    const { html, text } = renderBody(row.body);
    detail.body_html = html;
    detail.body_text = text;
  }
  return pickFields(detail, fields);
}

/**
 * A search hit: the list item, and where it matched when `words` are given (computed from the
 * stored title and body, the same for every engine).
 */
export function toSearchHit(row: ArticleWithSection, words: readonly QueryWord[] | undefined): SearchHit {
  const hit: SearchHit = toArticle(row);
  if (words) hit.highlights = highlight(row, words);
  return hit;
}

export function toSection(s: SectionSummary): Section {
  return { slug: s.slug, name: s.name, description: s.description, article_count: s.articleCount };
}

export function pageMeta(result: ArticlePage, page: number, limit: number, locale: Locale) {
  return {
    page,
    limit,
    total: result.total,
    pages: Math.ceil(result.total / limit),
    locale,
  };
}

/** A change; `fields` (src/http/contract/fields.ts) applies to an upsert's article. */
export function toChange(change: FeedChange, fields?: readonly string[]): Change {
  const changed_at = formatUtcSeconds(change.changedAtMs);
  return change.type === 'upsert' && change.article
    ? { type: 'upsert', slug: change.slug, changed_at, article: pickFields(toArticle(change.article), fields) }
    : { type: 'delete', slug: change.slug, changed_at };
}
