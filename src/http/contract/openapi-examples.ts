import type { z } from 'zod';
import { highlight, queryWordsOf } from '../../search/highlight.js';
import type {
  Article,
  articleListSchema,
  changeListSchema,
  articleResponseSchema,
  Health,
  searchResultsSchema,
  sectionListSchema,
} from './response-schemas.js';

/*
 * Example bodies for the OpenAPI document, typed by the response schemas so they cannot
 * drift from what the API answers; test/http/contract/openapi-complete.test.ts also parses each one
 * with its strict zod schema.
 */

const article: Article = {
  slug: 'ipg-q3-results',
  locale: 'en',
  title: 'IPG Photonics reports third-quarter results',
  excerpt: 'Revenue from materials processing rose for the second quarter running.',
  section: { slug: 'markets', name: 'Markets' },
  author: 'Jane Doe',
  image: {
    url: 'https://images.example.com/ipg-q3.jpg',
    alt: 'A fiber laser cutting sheet metal',
    credit: 'Sam Lee',
    credit_url: 'https://photos.example.com/@samlee',
    source_url: 'https://photos.example.com/photo/12345',
  },
  published_at: '2026-10-20T08:00:00Z',
  updated_at: '2026-10-21T09:30:05Z',
  url: 'https://www.example.com/news/ipg-q3-results',
};

const withoutImage: Article = {
  ...article,
  slug: 'ultrafast-glass-cutting',
  title: 'Ultrafast lasers cut curved glass for phones',
  excerpt: 'A femtosecond process removes a polishing step.',
  section: { slug: 'ultrafast', name: 'Ultrafast' },
  author: '',
  image: null,
  published_at: '2026-10-19T14:00:00Z',
  updated_at: '2026-10-19T14:00:00Z',
  url: 'https://www.example.com/news/ultrafast-glass-cutting',
};

export const articleListExample: z.output<typeof articleListSchema> = {
  data: [article, withoutImage],
  meta: { page: 1, limit: 2, total: 143, pages: 72, locale: 'en' },
};

export const articleResponseExample: z.output<typeof articleResponseSchema> = {
  data: {
    ...article,
    body: '## Results\n\nRevenue rose 4% on the quarter, led by **materials processing**.\n',
  },
};

export const sectionListExample: z.output<typeof sectionListSchema> = {
  data: [
    { slug: 'markets', name: 'Markets', description: 'Orders, revenue and deals.', article_count: 58 },
    { slug: 'ultrafast', name: 'Ultrafast', description: null, article_count: 21 },
  ],
  meta: { total: 2, locale: 'en' },
};

const searchedBody =
  'A femtosecond laser process from Kestrel Beam cuts curved cover glass in one pass. <b>No polishing</b> step follows, ' +
  'so a phone maker saves a station on each line. The ultrafast source runs at 1 MHz and 40 W; the company says ' +
  'the "edge strength" of the glass matches that of ground edges & that yields reached 98% in trials over the summer ' +
  'at two plants in Shenzhen.';

// Computed by the code that answers searches, so the example is what the API would say.
export const searchResultsExample: z.output<typeof searchResultsSchema> = {
  data: [{ ...withoutImage, highlights: highlight({ title: withoutImage.title, body: searchedBody }, queryWordsOf(['ultrafast', 'glass'])) }],
  meta: { page: 1, limit: 20, total: 1, pages: 1, locale: 'en', q: 'Ultrafast glass', words: ['ultrafast', 'glass'] },
};

export const healthExample: Health = {
  status: 'ok',
  snapshot: {
    locales: {
      en: { synced_at: '2026-10-21T09:35:00Z', age_seconds: 42, changed_at: '2026-10-21T09:30:05Z' },
      zh: { synced_at: '2026-10-21T09:35:00Z', age_seconds: 42, changed_at: '2026-10-21T09:12:40Z' },
    },
    age_seconds: 42,
    max_age_seconds: 1800,
    last_sync: { kind: 'incremental', finished_at: '2026-10-21T09:35:00Z', age_seconds: 42 },
    last_attempt: {
      kind: 'incremental',
      status: 'succeeded',
      started_at: '2026-10-21T09:34:58Z',
      finished_at: '2026-10-21T09:35:00Z',
      error: null,
    },
    last_failure: null,
  },
  search: { engine: 'sqlite', status: 'ok' },
  feed: { entries: 1432, oldest_delete_at: '2026-09-22T08:00:00Z' },
};

export const changeListExample: z.output<typeof changeListSchema> = {
  data: [
    { type: 'upsert', slug: article.slug, changed_at: '2026-10-21T09:30:05Z', article },
    { type: 'delete', slug: 'old-story', changed_at: '2026-10-21T09:31:00Z' },
  ],
  meta: { locale: 'en', limit: 100, since: null, next: 'c_AAAAAQAAAZKxyz', has_more: false },
};

export const healthUnavailableExample: Health = {
  status: 'unavailable',
  error: { code: 'service_unavailable', message: 'The snapshot is unavailable: no sync has completed yet.' },
  search: { engine: 'sqlite', status: 'ok' },
};

export const openApiExample = {
  openapi: '3.1.0',
  info: { title: 'Article syndication API', version: '1.0.0' },
  paths: { '/api/v1/articles': { get: { operationId: 'listArticles' } } },
};
