import type { Locale } from '../../src/locale.js';
import { CmsError } from './errors.js';
import type { CmsHttpClient } from './http-client.js';
import { articlePageEnvelope, parseArticle, parseEnvelope, parseSection, sectionsEnvelope } from './schemas.js';
import type { CmsArticlePage, CmsArticlePageQuery, ArticleRecord, CmsAdapter, RejectedRecord, SectionList, SectionRecord } from './types.js';

export interface HttpCmsAdapterOptions {
  client: CmsHttpClient;
}

/**
 * The `http` adapter: reads the CMS contract (docs/specs/cms-contract.md) through the client. A response
 * of the wrong shape fails the request (not retryable: asking again gets the same answer); a
 * bad record only lands in `rejected`.
 */
export function createHttpCmsAdapter({ client }: HttpCmsAdapterOptions): CmsAdapter {
  return {
    async listSections(locale: Locale, signal?: AbortSignal): Promise<SectionList> {
      const path = `/sections?${new URLSearchParams({ locale })}`;
      const body = await client.getJson(path, signal);
      const envelope = parseEnvelope(sectionsEnvelope, body);
      if (!envelope.ok) throw invalidResponse(path, envelope.reason);
      const sections: SectionRecord[] = [];
      const rejected: RejectedRecord[] = [];
      for (const raw of envelope.data.data) {
        const parsed = parseSection(raw, locale);
        if (parsed.ok) sections.push(parsed.record);
        else rejected.push(parsed.rejected);
      }
      return { sections, rejected };
    },

    async listArticles(query: CmsArticlePageQuery, signal?: AbortSignal): Promise<CmsArticlePage> {
      const params = new URLSearchParams({
        locale: query.locale,
        page: String(query.page),
        per_page: String(query.perPage),
      });
      if (query.publishedOnly) params.set('status', 'published');
      if (query.updatedSince !== undefined) params.set('updated_since', query.updatedSince);
      const path = `/articles?${params}`;
      const body = await client.getJson(path, signal);
      const envelope = parseEnvelope(articlePageEnvelope, body);
      if (!envelope.ok) throw invalidResponse(path, envelope.reason);
      const { data, meta } = envelope.data;
      // A CMS that clamps the page number would make the worker read one page forever.
      if (meta.page !== query.page) {
        throw invalidResponse(path, `meta.page is ${meta.page}, expected ${query.page}`);
      }
      if (data.length > query.perPage) {
        throw invalidResponse(path, `${data.length} records on a page of ${query.perPage}`);
      }
      const articles: ArticleRecord[] = [];
      const rejected: RejectedRecord[] = [];
      for (const raw of data) {
        const parsed = parseArticle(raw, query.locale);
        if (parsed.ok) articles.push(parsed.record);
        else rejected.push(parsed.rejected);
      }
      return { articles, rejected, page: meta.page, perPage: meta.per_page, total: meta.total, pages: meta.pages };
    },
  };
}

function invalidResponse(path: string, reason: string): CmsError {
  return new CmsError({ kind: 'invalid_response', request: `GET ${path}`, cause: reason, retryable: false });
}
