import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { expectError, isoPlus, MINUTE } from '../../support/contract-helpers.js';

const NOW = '2026-11-01T12:00:00Z';
const dir = tempDir();
const dbPath = dir.path('snapshot.db');
let api: TestApi;
let key: string;

// Seven laser articles in en (so page 2 of limit 5 exists), two in zh.
const enArticles = Array.from({ length: 7 }, (_, i) =>
  rawArticle({
    slug: `laser-${i}`,
    title: `Laser news number ${i}`,
    section_slug: 'fiber',
    published_at: isoPlus(NOW, -(i + 1) * MINUTE),
  }),
);
const zhArticles = [
  rawArticle({ locale: 'zh', slug: 'zh-1', title: '光纤激光器出口增长', section_slug: 'fiber', published_at: isoPlus(NOW, -MINUTE) }),
  rawArticle({ locale: 'zh', slug: 'zh-2', title: '激光切割设备销量', section_slug: 'fiber', published_at: isoPlus(NOW, -2 * MINUTE) }),
];

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [
      rawSection({ slug: 'fiber', name: 'Fiber', position: 1 }),
      rawSection({ slug: 'events', name: 'Events', position: 2, active: false }),
      { ...rawSection({ slug: 'fiber', name: '光纤', position: 1 }), locale: 'zh' },
    ],
    articles: [...enArticles, ...zhArticles],
  });
  key = addKey(dbPath).key;
  api = await startApi({ databasePath: dbPath, clock: testClock(NOW) });
});

afterAll(async () => {
  await api.close();
  dir.cleanup();
});

const get = (path: string) => api.request.get(path).set('X-API-Key', key);

/** One URL per endpoint, each valid as it stands, to which a query string is appended. */
const ENDPOINTS = {
  list: '/api/v1/articles?',
  detail: '/api/v1/articles/laser-0?',
  categories: '/api/v1/categories?',
  search: '/api/v1/search?q=laser&',
} as const;
const PAGED = { list: ENDPOINTS.list, search: ENDPOINTS.search } as const;

describe('locale', () => {
  it('defaults to en on every endpoint, the single article included', async () => {
    expect((await get(ENDPOINTS.list)).body.meta.locale).toBe('en');
    expect((await get(ENDPOINTS.search)).body.meta.locale).toBe('en');
    expect((await get(ENDPOINTS.categories)).body.meta.locale).toBe('en');
    const detail = await get(ENDPOINTS.detail);
    expect(detail.status).toBe(200);
    expect(detail.body.data.locale).toBe('en');
  });

  it('selects zh on every endpoint, the single article included', async () => {
    const list = await get('/api/v1/articles?locale=zh');
    expect(list.body.meta).toMatchObject({ locale: 'zh', total: 2 });
    expect(list.body.data.every((a: { locale: string }) => a.locale === 'zh')).toBe(true);
    const search = await get(`/api/v1/search?q=${encodeURIComponent('激光')}&locale=zh`);
    expect(search.body.meta).toMatchObject({ locale: 'zh', total: 2 });
    const categories = await get('/api/v1/categories?locale=zh');
    expect(categories.body).toEqual({
      data: [{ slug: 'fiber', name: '光纤', description: expect.any(String), article_count: 2 }],
      meta: { total: 1, locale: 'zh' },
    });
    const detail = await get('/api/v1/articles/zh-1?locale=zh');
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({ slug: 'zh-1', locale: 'zh' });
    expect((await get('/api/v1/articles/zh-1')).status).toBe(404);
  });

  it.each(['fr', 'EN', 'en-US', 'zh-CN', '', ' en', 'en%00'])('rejects locale=%j with 400 on every endpoint', async (value) => {
    for (const [name, base] of Object.entries(ENDPOINTS)) {
      const res = await get(`${base}locale=${value}`);
      expectError(res, 400, 'invalid_parameter', 'locale');
      expect(res.body.error.message, name).toContain('locale');
    }
  });
});

describe('page and limit', () => {
  const BAD = ['+1', '%2B1', '1.0', '1e1', '%201', '1%20', '-1', '0', '', 'abc', '0x10', '1,2', '%EF%BC%91'];

  it.each(BAD)('rejects page=%j with a 400 naming page', async (value) => {
    for (const base of Object.values(PAGED)) {
      const res = await get(`${base}page=${value}`);
      expectError(res, 400, 'invalid_parameter', 'page');
      expect(res.body.error.message).toMatch(/^page /);
    }
  });

  it.each([...BAD, '51', '100', '9007199254740991'])('rejects limit=%j with a 400 naming limit', async (value) => {
    for (const base of Object.values(PAGED)) {
      const res = await get(`${base}limit=${value}`);
      expectError(res, 400, 'invalid_parameter', 'limit');
      expect(res.body.error.message).toMatch(/^limit .*1 to 50/);
    }
  });

  it('reads leading zeros as plain digits: page=001&limit=007 is page 1 of 7 per page', async () => {
    for (const base of Object.values(PAGED)) {
      const res = await get(`${base}page=001&limit=007`);
      expect(res.status).toBe(200);
      expect(res.body.meta).toMatchObject({ page: 1, limit: 7, total: 7, pages: 1 });
      expect(res.body.data).toHaveLength(7);
    }
  });

  it('defaults to page 1 and limit 20', async () => {
    for (const base of Object.values(PAGED)) {
      const res = await get(base);
      expect(res.body.meta).toMatchObject({ page: 1, limit: 20, total: 7, pages: 1 });
    }
  });

  it('accepts the limit bounds 1 and 50', async () => {
    for (const base of Object.values(PAGED)) {
      const one = await get(`${base}limit=1`);
      expect(one.status).toBe(200);
      expect(one.body.data).toHaveLength(1);
      expect(one.body.meta).toMatchObject({ limit: 1, total: 7, pages: 7 });
      const fifty = await get(`${base}limit=50`);
      expect(fifty.status).toBe(200);
      expect(fifty.body.meta).toMatchObject({ limit: 50, pages: 1 });
    }
  });

  it('answers a page past the last with 200, empty data and the true total and pages', async () => {
    for (const base of Object.values(PAGED)) {
      const second = await get(`${base}page=2&limit=5`);
      expect(second.body.data).toHaveLength(2);
      const past = await get(`${base}page=3&limit=5`);
      expect(past.status).toBe(200);
      expect(past.body.data).toEqual([]);
      expect(past.body.meta).toMatchObject({ page: 3, limit: 5, total: 7, pages: 2 });
    }
  });

  it('accepts page up to 2^53-1 and rejects anything larger', async () => {
    for (const base of Object.values(PAGED)) {
      const max = await get(`${base}page=9007199254740991&limit=50`);
      expect(max.status).toBe(200);
      expect(max.body.data).toEqual([]);
      expect(max.body.meta).toMatchObject({ page: 9007199254740991, total: 7, pages: 1 });
      expectError(await get(`${base}page=9007199254740992`), 400, 'invalid_parameter', 'page');
      expectError(await get(`${base}page=99999999999999999999999`), 400, 'invalid_parameter', 'page');
    }
  });
});

describe('repeated and unknown parameters', () => {
  const USED: Record<keyof typeof ENDPOINTS, string[]> = {
    list: ['locale=en', 'page=1', 'limit=5', 'section=fiber'],
    detail: ['locale=en'],
    categories: ['locale=en'],
    search: ['locale=en', 'page=1', 'limit=5', 'section=fiber'],
  };

  it('rejects a parameter the endpoint uses given twice, even with the same value, naming it', async () => {
    for (const [endpoint, pairs] of Object.entries(USED) as [keyof typeof ENDPOINTS, string[]][]) {
      for (const pair of pairs) {
        const name = pair.split('=')[0] as string;
        const res = await get(`${ENDPOINTS[endpoint]}${pair}&${pair}`);
        expectError(res, 400, 'invalid_parameter', name);
        expect(res.body.error.message, `${endpoint} ${name}`).toContain(name);
      }
    }
    // q twice on search; the search base already carries one q.
    expectError(await get('/api/v1/search?q=laser&q=laser'), 400, 'invalid_parameter', 'q');
    expectError(await get('/api/v1/articles?limit=5&limit=9'), 400, 'invalid_parameter', 'limit');
  });

  it('ignores unknown parameters, also when given twice or with values that would be invalid', async () => {
    for (const base of Object.values(ENDPOINTS)) {
      const plain = await get(base);
      const res = await get(`${base}foo=1&foo=2&utm_source=x&LIMIT=abc&Page=-1`);
      expect(res.status, base).toBe(200);
      expect(res.body).toEqual(plain.body);
    }
  });

  it('ignores parameters that belong to other endpoints', async () => {
    const categories = await get('/api/v1/categories?page=abc&limit=0&q=a&section=x&section=y');
    expect(categories.status).toBe(200);
    expect(categories.body.meta).toEqual({ total: 1, locale: 'en' });
    const detail = await get('/api/v1/articles/laser-0?limit=999&page=0&page=1&q=');
    expect(detail.status).toBe(200);
    const list = await get('/api/v1/articles?q=a&q=b');
    expect(list.status).toBe(200);
  });
});

describe('section', () => {
  it('gives an empty list, not an error, for an unknown or inactive section', async () => {
    for (const base of Object.values(PAGED)) {
      for (const section of ['events', 'nope', 'FIBER']) {
        const res = await get(`${base}section=${section}`);
        expect(res.status).toBe(200);
        expect(res.body.data).toEqual([]);
        expect(res.body.meta).toMatchObject({ total: 0, pages: 0 });
      }
      const fiber = await get(`${base}section=fiber`);
      expect(fiber.body.meta.total).toBe(7);
    }
  });
});

describe('q', () => {
  it('is required on search', async () => {
    const res = await get('/api/v1/search');
    expectError(res, 400, 'invalid_parameter', 'q');
    expect(res.body.error.message).toMatch(/^q is required/);
  });

  // 🔬 is one code point but two UTF-16 units: it must count as one character.
  it.each(['', 'a', '  a  ', '   ', '\ta\n', 'é', '激', '🔬', ' 🔬 '])('rejects q=%j, under 2 characters once trimmed', async (q) => {
    const res = await get(`/api/v1/search?q=${encodeURIComponent(q)}`);
    expectError(res, 400, 'invalid_parameter', 'q');
    expect(res.body.error.message).toContain('2 characters');
  });

  it('counts Unicode code points: 激光 is 2 characters and valid', async () => {
    const res = await get(`/api/v1/search?q=${encodeURIComponent('激光')}&locale=zh`);
    expect(res.status).toBe(200);
    expect(res.body.meta.q).toBe('激光');
    expect(res.body.meta.total).toBe(2);
  });

  it('accepts 200 characters and rejects 201, counted as code points (CJK and astral alike)', async () => {
    for (const char of ['激', '🔬']) {
      const ok = await get(`/api/v1/search?q=${encodeURIComponent(char.repeat(200))}&locale=zh`);
      expect(ok.status, char).toBe(200);
      expect(ok.body.meta.q).toBe(char.repeat(200));
      const padded = await get(`/api/v1/search?q=${encodeURIComponent(`  ${char.repeat(200)}  `)}`);
      expect(padded.status, char).toBe(200);
      const tooLong = await get(`/api/v1/search?q=${encodeURIComponent(char.repeat(201))}`);
      expectError(tooLong, 400, 'invalid_parameter', 'q');
      expect(tooLong.body.error.message).toContain('200 characters');
    }
  });

  it('is trimmed, and echoed trimmed in meta.q', async () => {
    const res = await get(`/api/v1/search?q=${encodeURIComponent('   Laser  ')}`);
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ page: 1, limit: 20, total: 7, pages: 1, locale: 'en', q: 'Laser', words: ['laser'] });
  });
});
