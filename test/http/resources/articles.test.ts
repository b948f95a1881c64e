import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { articleListSchema, articleResponseSchema } from '../../../src/http/contract/response-schemas.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';

const NOW = '2026-11-01T12:00:00Z';
const minutesBefore = (m: number) => new Date(Date.parse(NOW) - m * 60_000).toISOString().replace('.000Z', 'Z');

const dir = tempDir();
const dbPath = dir.path('snapshot.db');
const clock = testClock(NOW);
let api: TestApi;
let key: string;

const fiber = rawSection({ slug: 'fiber', name: 'Fiber Lasers', position: 2 });
const ultrafast = rawSection({ slug: 'ultrafast', name: 'Ultrafast', position: 1 });
const events = rawSection({ slug: 'events', name: 'Events', position: 3, active: false });
const zhFiber = { ...rawSection({ slug: 'fiber', name: '光纤激光器', position: 1 }), locale: 'zh' as const };

// 23 visible fiber articles, newest first: fiber-00 (1 min ago) ... fiber-22 (23 min ago).
const fiberArticles = Array.from({ length: 23 }, (_, i) =>
  rawArticle({ slug: `fiber-${String(i).padStart(2, '0')}`, section_slug: 'fiber', published_at: minutesBefore(i + 1) }),
);
// Two articles published at the same second: ties go by slug ascending.
const tieB = rawArticle({ slug: 'tie-b', section_slug: 'ultrafast', published_at: minutesBefore(100) });
const tieA = rawArticle({ slug: 'tie-a', section_slug: 'ultrafast', published_at: minutesBefore(100) });
const withImage = rawArticle({
  slug: 'with-image',
  section_slug: 'ultrafast',
  author: null,
  published_at: minutesBefore(200),
  image: {
    url: 'https://img.example.com/a.jpg',
    alt: 'A fiber laser',
    credit: 'Sam Lee',
    credit_url: 'https://photos.example.com/@samlee',
    source_url: 'https://photos.example.com/photo/123',
  },
  body_markdown: '## Results\n\nRevenue rose “4%” — <b>not bold</b> \\ 🔬',
});
const hidden = [
  rawArticle({ slug: 'in-inactive-section', section_slug: 'events', published_at: minutesBefore(5) }),
  rawArticle({ slug: 'without-section', section_slug: null, published_at: minutesBefore(5) }),
  rawArticle({ slug: 'in-unknown-section', section_slug: 'ghost', published_at: minutesBefore(5) }),
  rawArticle({ slug: 'a-draft', section_slug: 'fiber', status: 'draft', published_at: null }),
  rawArticle({ slug: 'archived', section_slug: 'fiber', status: 'archived', published_at: minutesBefore(5) }),
];
const scheduled = rawArticle({ slug: 'scheduled', section_slug: 'fiber', published_at: '2026-11-01T13:00:00Z' });
const zhArticle = rawArticle({
  locale: 'zh',
  slug: 'wuhan-fiber',
  title: '武汉光纤激光器出口增长',
  section_slug: 'fiber',
  published_at: '2026-11-01T16:00:00+08:00',
  updated_at: '2026-11-01T17:30:00+08:00',
});

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [fiber, ultrafast, events, zhFiber],
    articles: [...fiberArticles, tieB, tieA, withImage, ...hidden, scheduled, zhArticle],
  });
  key = addKey(dbPath).key;
  api = await startApi({ databasePath: dbPath, clock });
});

afterAll(async () => {
  await api.close();
  dir.cleanup();
});

const get = (path: string) => api.request.get(path).set('X-API-Key', key);

describe('GET /api/v1/articles', () => {
  it('returns the envelope with data and meta, every item in the public Article shape', async () => {
    const res = await get('/api/v1/articles');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = articleListSchema.strict().parse(res.body);
    expect(body.meta).toEqual({ page: 1, limit: 20, total: 26, pages: 2, locale: 'en' });
    for (const item of res.body.data) {
      expect(Object.keys(item).sort()).toEqual(
        ['author', 'excerpt', 'image', 'locale', 'published_at', 'section', 'slug', 'title', 'updated_at', 'url'],
      );
    }
  });

  it('orders newest published_at first, ties by slug ascending', async () => {
    const res = await get('/api/v1/articles?limit=50');
    const slugs = res.body.data.map((a: { slug: string }) => a.slug);
    expect(slugs.slice(0, 3)).toEqual(['fiber-00', 'fiber-01', 'fiber-02']);
    expect(slugs.slice(23)).toEqual(['tie-a', 'tie-b', 'with-image']);
  });

  it('exposes only published articles of active sections whose time has come', async () => {
    const res = await get('/api/v1/articles?limit=50');
    const slugs: string[] = res.body.data.map((a: { slug: string }) => a.slug);
    for (const h of [...hidden, scheduled]) expect(slugs).not.toContain(h.slug);
    expect(res.body.meta.total).toBe(26);
  });

  it('serializes image, a missing author as "", section and UTC timestamps', async () => {
    const res = await get('/api/v1/articles?section=ultrafast');
    const item = res.body.data.find((a: { slug: string }) => a.slug === 'with-image');
    expect(item).toEqual({
      slug: 'with-image',
      locale: 'en',
      title: withImage.title,
      excerpt: withImage.excerpt,
      section: { slug: 'ultrafast', name: 'Ultrafast' },
      author: '',
      image: {
        url: 'https://img.example.com/a.jpg',
        alt: 'A fiber laser',
        credit: 'Sam Lee',
        credit_url: 'https://photos.example.com/@samlee',
        source_url: 'https://photos.example.com/photo/123',
      },
      published_at: withImage.published_at,
      updated_at: withImage.updated_at,
      url: withImage.url,
    });
    const tie = res.body.data.find((a: { slug: string }) => a.slug === 'tie-a');
    expect(tie.image).toBeNull();
    expect(tie.author).toBe('Jane Doe');
  });

  it('pages with page and limit, pages = ceil(total / limit)', async () => {
    const res = await get('/api/v1/articles?page=3&limit=7');
    expect(res.body.meta).toEqual({ page: 3, limit: 7, total: 26, pages: 4, locale: 'en' });
    expect(res.body.data.map((a: { slug: string }) => a.slug)).toEqual(
      ['fiber-14', 'fiber-15', 'fiber-16', 'fiber-17', 'fiber-18', 'fiber-19', 'fiber-20'],
    );
    const last = await get('/api/v1/articles?page=4&limit=7');
    expect(last.body.data.map((a: { slug: string }) => a.slug)).toEqual(['fiber-21', 'fiber-22', 'tie-a', 'tie-b', 'with-image']);
  });

  it('answers a page past the last with an empty data array and the true total and pages', async () => {
    const res = await get('/api/v1/articles?page=99&limit=10');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], meta: { page: 99, limit: 10, total: 26, pages: 3, locale: 'en' } });
    const huge = await get('/api/v1/articles?page=9007199254740991');
    expect(huge.status).toBe(200);
    expect(huge.body.data).toEqual([]);
  });

  it('restricts to one section; an unknown or inactive section is an empty list, not an error', async () => {
    const fiberOnly = await get('/api/v1/articles?section=fiber&limit=50');
    expect(fiberOnly.body.meta.total).toBe(23);
    expect(fiberOnly.body.data.every((a: { section: { slug: string } }) => a.section.slug === 'fiber')).toBe(true);
    for (const section of ['events', 'nope', '']) {
      const res = await get(`/api/v1/articles?section=${section}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: [], meta: { page: 1, limit: 20, total: 0, pages: 0, locale: 'en' } });
    }
  });

  it('serves the zh locale with its own sections and UTC timestamps from +08:00 input', async () => {
    const res = await get('/api/v1/articles?locale=zh');
    expect(res.body.meta).toMatchObject({ total: 1, locale: 'zh' });
    expect(res.body.data[0]).toMatchObject({
      slug: 'wuhan-fiber',
      locale: 'zh',
      title: '武汉光纤激光器出口增长',
      section: { slug: 'fiber', name: '光纤激光器' },
      published_at: '2026-11-01T08:00:00Z',
      updated_at: '2026-11-01T09:30:00Z',
    });
  });

  it('shows a scheduled article by itself once its time comes, without a sync', async () => {
    const before = await get('/api/v1/articles?limit=1');
    expect(before.body.data[0].slug).toBe('fiber-00');
    clock.set('2026-11-01T13:00:00Z');
    try {
      const after = await get('/api/v1/articles?limit=1');
      expect(after.body.data[0].slug).toBe('scheduled');
      expect(after.body.meta.total).toBe(27);
      expect(after.headers.etag).not.toBe(before.headers.etag);
      const detail = await get('/api/v1/articles/scheduled');
      expect(detail.status).toBe(200);
    } finally {
      clock.set(NOW);
    }
  });
});

describe('GET /api/v1/articles/{slug}', () => {
  it('returns { data: ArticleDetail } with the Markdown body', async () => {
    const res = await get('/api/v1/articles/with-image');
    expect(res.status).toBe(200);
    const body = articleResponseSchema.parse(res.body);
    expect(body.data.body).toBe(withImage.body_markdown);
    expect(Object.keys(res.body)).toEqual(['data']);
  });

  it('matches the slug exactly within the requested locale', async () => {
    expect((await get('/api/v1/articles/WITH-IMAGE')).status).toBe(404);
    expect((await get('/api/v1/articles/with-image?locale=zh')).status).toBe(404);
    const zh = await get('/api/v1/articles/wuhan-fiber?locale=zh');
    expect(zh.status).toBe(200);
    expect(zh.body.data.title).toBe('武汉光纤激光器出口增长');
  });

  it('answers 404 not_found for unknown, unpublished, hidden and scheduled articles', async () => {
    for (const slug of ['nope', 'a-draft', 'archived', 'in-inactive-section', 'without-section', 'scheduled']) {
      const res = await get(`/api/v1/articles/${slug}`);
      expect(res.status, slug).toBe(404);
      expect(res.body.error.code).toBe('not_found');
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });

  it('repeats an unknown slug in the 404 message, cut short when it is long', async () => {
    expect((await get('/api/v1/articles/nope')).body.error.message).toBe('No published article has the slug "nope" in locale en.');
    const long = (await get(`/api/v1/articles/${'x'.repeat(5_000)}`)).body.error.message as string;
    expect(long).toBe(`No published article has the slug "${'x'.repeat(100)}…" (5000 characters) in locale en.`);
  });

  it('validates locale on the single article too', async () => {
    const res = await get('/api/v1/articles/with-image?locale=fr');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_parameter', param: 'locale' });
  });
});
