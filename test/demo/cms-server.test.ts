import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCmsServer, type CmsServerHandle } from '../../src/demo/cms-server.js';
import { CmsStore } from '../../src/demo/cms-store.js';
import { parseArticle } from '../../sync/cms/schemas.js';
import { CORPUS_TERMS, generateCorpus, rawArticle, rawSection } from '../support/cms-fixtures.js';
import { startTestCms } from '../fakes/test-cms.js';

const TOKEN = 'demo-token';
let server: CmsServerHandle;
let store: CmsStore;

beforeEach(async () => {
  store = new CmsStore();
  server = await startCmsServer({ store, token: TOKEN, basePath: '/export' });
});

afterEach(async () => {
  await server.close();
});

async function get(path: string, token: string | null = TOKEN): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.json() };
}

const ids = (body: { data: Array<{ id: string }> }): string[] => body.data.map((a) => a.id);

describe('contract CMS server: listing articles', () => {
  beforeEach(() => {
    store.upsertArticles([
      rawArticle({ id: 'art-b', updated_at: '2026-10-20T03:00:00Z' }),
      rawArticle({ id: 'art-c', updated_at: '2026-10-20T02:00:00Z', status: 'draft' }),
      rawArticle({ id: 'art-a', updated_at: '2026-10-20T10:00:00+08:00' }),
      rawArticle({ id: 'art-d', updated_at: '2026-10-19T23:00:00-05:00', status: 'archived' }),
      rawArticle({ id: 'art-e', updated_at: '2026-10-19T12:00:00Z' }),
      rawArticle({ id: 'zh-1', locale: 'zh', updated_at: '2026-10-19T12:00:00+08:00' }),
    ]);
  });

  it('orders by updated_at as an instant, then by id, whatever the offsets', async () => {
    const { status, body } = await get('/articles?locale=en&page=1&per_page=100');
    expect(status).toBe(200);
    // art-a (+08:00) and art-c are the same instant, 02:00Z; art-d is 04:00Z the next day.
    expect(ids(body)).toEqual(['art-e', 'art-a', 'art-c', 'art-b', 'art-d']);
    expect(body.meta).toEqual({ page: 1, per_page: 100, total: 5, pages: 1 });
  });

  it('pages 1-based and answers a page past the end with empty data and true meta', async () => {
    expect(ids((await get('/articles?locale=en&page=2&per_page=2')).body)).toEqual(['art-c', 'art-b']);
    expect((await get('/articles?locale=en&page=3&per_page=2')).body).toMatchObject({ meta: { page: 3, total: 5, pages: 3 } });
    const past = await get('/articles?locale=en&page=9&per_page=2');
    expect(past.body).toEqual({ data: [], meta: { page: 9, per_page: 2, total: 5, pages: 3 } });
  });

  it('returns only published articles with status=published', async () => {
    const { body } = await get('/articles?locale=en&page=1&per_page=100&status=published');
    expect(ids(body)).toEqual(['art-e', 'art-a', 'art-b']);
    expect(body.meta.total).toBe(3);
  });

  it('returns articles of any status changed at or after updated_since, compared as instants', async () => {
    const since = encodeURIComponent('2026-10-20T10:00:00+08:00');
    const { body } = await get(`/articles?locale=en&page=1&per_page=100&updated_since=${since}`);
    expect(ids(body)).toEqual(['art-a', 'art-c', 'art-b', 'art-d']);
  });

  it('combines status=published and updated_since', async () => {
    const since = encodeURIComponent('2026-10-20T02:00:01Z');
    const { body } = await get(`/articles?locale=en&page=1&per_page=100&status=published&updated_since=${since}`);
    expect(ids(body)).toEqual(['art-b']);
    expect(body.meta).toEqual({ page: 1, per_page: 100, total: 1, pages: 1 });
  });

  it('keeps locales apart', async () => {
    expect(ids((await get('/articles?locale=zh&page=1&per_page=100')).body)).toEqual(['zh-1']);
  });

  it('drops a deleted article and moves a changed one to the end', async () => {
    store.removeArticle('art-e');
    store.upsertArticle({ ...store.getArticle('art-a')!, updated_at: '2026-10-22T00:00:00Z' });
    expect(ids((await get('/articles?locale=en&page=1&per_page=100')).body)).toEqual(['art-c', 'art-b', 'art-d', 'art-a']);
  });

  it.each([
    ['per_page=0', 'per_page must be an integer from 1 to 100'],
    ['per_page=101', 'per_page must be an integer from 1 to 100'],
    ['per_page=ten', 'per_page must be an integer from 1 to 100'],
    ['page=0', 'page must be an integer of 1 or more'],
    ['status=draft', 'status must be published when given'],
    ['updated_since=yesterday', 'updated_since must be an ISO 8601 timestamp with an offset'],
  ])('answers %s with a 400 JSON error', async (param, message) => {
    const { status, body } = await get(`/articles?locale=en&${param}`);
    expect(status).toBe(400);
    expect(body).toEqual({ error: { code: 'invalid_parameter', message } });
  });

  it('answers a missing or unknown locale with 400', async () => {
    expect((await get('/articles?page=1')).status).toBe(400);
    expect((await get('/sections?locale=fr')).status).toBe(400);
  });
});

describe('contract CMS server: access and routes', () => {
  it('answers 401 without the token or with a wrong one', async () => {
    for (const token of [null, 'demo-tokenX', '']) {
      const { status, body } = await get('/sections?locale=en', token);
      expect(status).toBe(401);
      expect(body.error.code).toBe('unauthorized');
    }
    expect((await get('/sections?locale=en')).status).toBe(200);
  });

  it('serves the contract under the base path only and answers unknown paths with 404 JSON', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/export$/);
    expect((await get('/nothing?locale=en')).body).toEqual({ error: { code: 'not_found', message: 'no such path: /export/nothing' } });
    const outside = await fetch(server.url.replace('/export', '/articles?locale=en'), { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(outside.status).toBe(404);
  });

  it('refuses methods other than GET', async () => {
    const res = await fetch(`${server.url}/articles?locale=en`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(405);
  });

  it('lists every section of a locale, inactive ones included, in editorial order', async () => {
    store.upsertSection('en', rawSection({ id: 's-2', position: 2 }));
    store.upsertSection('en', rawSection({ id: 's-1', position: 1, active: false }));
    store.upsertSection('zh', rawSection({ id: 's-zh', position: 1 }));
    const { body } = await get('/sections?locale=en');
    expect(body.data.map((s: { id: string; active: boolean }) => [s.id, s.active])).toEqual([
      ['s-1', false],
      ['s-2', true],
    ]);
    expect(Object.keys(body.data[0]).sort()).toEqual(['active', 'description', 'id', 'name', 'position', 'slug', 'updated_at']);
  });
});

describe('test CMS hooks', () => {
  it('calls onPage with the query before each articles page, so a test can shift records', async () => {
    const cms = await startTestCms({ token: TOKEN });
    try {
      cms.store.upsertArticles([rawArticle({ id: 'p-1' }), rawArticle({ id: 'p-2' }), rawArticle({ id: 'p-3' })]);
      const seen: number[] = [];
      cms.onPage((query) => {
        seen.push(query.page);
        if (query.page === 2) cms.store.removeArticle('p-1');
      });
      const headers = { authorization: `Bearer ${TOKEN}` };
      const page = async (n: number) =>
        ((await (await fetch(`${cms.url}/articles?locale=en&page=${n}&per_page=1`, { headers })).json()) as { data: Array<{ id: string }> }).data;
      expect((await page(1)).map((a) => a.id)).toEqual(['p-1']);
      // p-1 is gone, so p-2 shifted onto page 1 and page 2 now holds p-3.
      expect((await page(2)).map((a) => a.id)).toEqual(['p-3']);
      expect(seen).toEqual([1, 2]);
      expect(cms.requests.every((r) => r.hasAuthorization)).toBe(true);
      expect(JSON.stringify(cms.requests)).not.toContain(TOKEN);
    } finally {
      await cms.close();
    }
  });
});

describe('contract CMS store at benchmark size', () => {
  it('pages 100,000 articles in logarithmic time once sorted', () => {
    const big = new CmsStore();
    const start = Date.UTC(2026, 0, 1);
    for (let i = 0; i < 100_000; i++) {
      const updated = new Date(start + i * 60_000).toISOString();
      big.upsertArticle(rawArticle({ id: `big-${i}`, updated_at: updated, status: i % 10 === 0 ? 'draft' : 'published' }));
    }
    const since = start + 50_000 * 60_000;
    big.queryArticles({ locale: 'en', page: 1, perPage: 100, publishedOnly: true }); // sorts once
    let last = { data: [] as unknown[], total: 0 };
    for (let page = 1; page <= 2000; page++) {
      last = big.queryArticles({ locale: 'en', page: (page % 450) + 1, perPage: 100, publishedOnly: true, updatedSinceMs: since });
    }
    expect(last.total).toBeGreaterThan(40_000);
    expect(last.total).toBeLessThan(50_000);
  });
});

describe('corpus fixtures', () => {
  it('generates the same contract-valid records for the same seed', () => {
    const a = generateCorpus({ locale: 'zh', count: 300, seed: 3 });
    expect(generateCorpus({ locale: 'zh', count: 300, seed: 3 })).toEqual(a);
    expect(generateCorpus({ locale: 'zh', count: 300, seed: 4 })).not.toEqual(a);
    for (const raw of [...a, ...generateCorpus({ locale: 'en', count: 300, seed: 3, unpublishedRatio: 0.5 })]) {
      expect(parseArticle(raw, raw.locale)).toMatchObject({ ok: true });
    }
    expect(a[0]?.updated_at).toMatch(/\+08:00$/);
    expect(new Set(a.map((r) => r.slug)).size).toBe(300);
  });

  it.each(['en', 'zh'] as const)('puts the %s search terms in the documented share of articles', (locale) => {
    const corpus = generateCorpus({ locale, count: 10_000, seed: 11 });
    const share = (term: string) => corpus.filter((a) => `${a.title}\n${a.excerpt}\n${a.body_markdown}`.includes(term)).length / corpus.length;
    const terms = CORPUS_TERMS[locale];
    expect(share(terms.half)).toBeGreaterThan(0.47);
    expect(share(terms.half)).toBeLessThan(0.53);
    expect(share(terms.twentieth)).toBeGreaterThan(0.04);
    expect(share(terms.twentieth)).toBeLessThan(0.06);
    expect(share(terms.thousandth)).toBeGreaterThan(0.0003);
    expect(share(terms.thousandth)).toBeLessThan(0.002);
  });
});
