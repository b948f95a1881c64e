import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sectionListSchema } from '../../../src/http/contract/response-schemas.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { deepStrict, isoPlus, MINUTE } from '../../support/contract-helpers.js';

const NOW = '2026-11-01T12:00:00Z';
const SCHEDULED_AT = isoPlus(NOW, 30 * MINUTE);
const dir = tempDir();
const dbPath = dir.path('snapshot.db');
const clock = testClock(NOW);
let api: TestApi;
let key: string;

// Editorial order is by position, ties by slug: markets(1), beta(2), alpha(2) -> markets, alpha, beta.
const sections = [
  rawSection({ slug: 'beta', name: 'Beta', description: 'Second by slug', position: 2 }),
  rawSection({ slug: 'alpha', name: 'Alpha', description: null, position: 2 }),
  rawSection({ slug: 'markets', name: 'Markets', description: 'Money and orders', position: 1 }),
  rawSection({ slug: 'retired', name: 'Retired', description: 'No longer shown', position: 0, active: false }),
  rawSection({ slug: 'empty', name: 'Empty', description: 'Nothing yet', position: 9 }),
  { ...rawSection({ slug: 'alpha', name: '阿尔法', description: '中文栏目', position: 1 }), locale: 'zh' as const },
];

const past = (m: number) => isoPlus(NOW, -m * MINUTE);
const articles = [
  // alpha: 3 exposed, 1 scheduled, 1 archived, 1 draft.
  rawArticle({ slug: 'a1', section_slug: 'alpha', published_at: past(1) }),
  rawArticle({ slug: 'a2', section_slug: 'alpha', published_at: past(2) }),
  rawArticle({ slug: 'a3', section_slug: 'alpha', published_at: past(3) }),
  rawArticle({ slug: 'a-scheduled', section_slug: 'alpha', published_at: SCHEDULED_AT }),
  rawArticle({ slug: 'a-archived', section_slug: 'alpha', status: 'archived', published_at: past(4) }),
  rawArticle({ slug: 'a-draft', section_slug: 'alpha', status: 'draft', published_at: null }),
  // beta: 1 exposed.
  rawArticle({ slug: 'b1', section_slug: 'beta', published_at: past(5) }),
  // markets: 2 exposed.
  rawArticle({ slug: 'm1', section_slug: 'markets', published_at: past(6) }),
  rawArticle({ slug: 'm2', section_slug: 'markets', published_at: past(7) }),
  // Not in any exposed section.
  rawArticle({ slug: 'r1', section_slug: 'retired', published_at: past(8) }),
  rawArticle({ slug: 'none', section_slug: null, published_at: past(9) }),
  // zh: its own counts.
  rawArticle({ locale: 'zh', slug: 'z1', section_slug: 'alpha', published_at: past(1) }),
];

beforeAll(async () => {
  buildSnapshot(dbPath, { sections, articles });
  key = addKey(dbPath).key;
  api = await startApi({ databasePath: dbPath, clock });
});

afterAll(async () => {
  await api.close();
  dir.cleanup();
});

const get = (path: string) => api.request.get(path).set('X-API-Key', key);

describe('GET /api/v1/categories', () => {
  it('returns exactly { data: [{slug, name, description, article_count}], meta: {total, locale} }', async () => {
    const res = await get('/api/v1/categories');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    deepStrict(sectionListSchema).parse(res.body);
    expect(res.body).toEqual({
      data: [
        { slug: 'markets', name: 'Markets', description: 'Money and orders', article_count: 2 },
        { slug: 'alpha', name: 'Alpha', description: null, article_count: 3 },
        { slug: 'beta', name: 'Beta', description: 'Second by slug', article_count: 1 },
        { slug: 'empty', name: 'Empty', description: 'Nothing yet', article_count: 0 },
      ],
      meta: { total: 4, locale: 'en' },
    });
  });

  it('orders by CMS position, ties by slug', async () => {
    const res = await get('/api/v1/categories');
    expect(res.body.data.map((s: { slug: string }) => s.slug)).toEqual(['markets', 'alpha', 'beta', 'empty']);
  });

  it('leaves inactive sections out', async () => {
    const res = await get('/api/v1/categories');
    expect(res.body.data.map((s: { slug: string }) => s.slug)).not.toContain('retired');
  });

  it('keeps description null when the CMS has none', async () => {
    const res = await get('/api/v1/categories');
    expect(res.body.data.find((s: { slug: string }) => s.slug === 'alpha').description).toBeNull();
  });

  it('counts in article_count exactly the articles the list exposes in that section', async () => {
    const res = await get('/api/v1/categories');
    for (const section of res.body.data as { slug: string; article_count: number }[]) {
      const list = await get(`/api/v1/articles?section=${section.slug}&limit=50`);
      expect(list.body.meta.total, section.slug).toBe(section.article_count);
    }
  });

  it('serves each locale its own sections and counts', async () => {
    const res = await get('/api/v1/categories?locale=zh');
    expect(res.body).toEqual({
      data: [{ slug: 'alpha', name: '阿尔法', description: '中文栏目', article_count: 1 }],
      meta: { total: 1, locale: 'zh' },
    });
  });

  it('counts a scheduled article once the clock passes its time, without a sync', async () => {
    const before = await get('/api/v1/categories');
    clock.set(SCHEDULED_AT);
    try {
      const after = await get('/api/v1/categories');
      const count = (body: { data: { slug: string; article_count: number }[] }) => body.data.find((s) => s.slug === 'alpha')?.article_count;
      expect(count(before.body)).toBe(3);
      expect(count(after.body)).toBe(4);
      expect(after.headers.etag).not.toBe(before.headers.etag);
    } finally {
      clock.set(NOW);
    }
    // And back: the count follows the clock, not a cache.
    const again = await get('/api/v1/categories');
    expect(again.body.data.find((s: { slug: string }) => s.slug === 'alpha').article_count).toBe(3);
  });
});
