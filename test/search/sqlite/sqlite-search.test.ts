import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchResultsSchema } from '../../../src/http/contract/response-schemas.js';
import { Catalog } from '../../../src/content/catalog.js';
import { normalizeQuery } from '../../../src/search/normalize.js';
import { SqliteFtsEngine } from '../../../src/search/sqlite/sqlite-fts.js';
import { matchFor } from '../../../src/search/sqlite/match-expression.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { deepStrict, expectError, isoPlus, MINUTE } from '../../support/contract-helpers.js';

const NOW = '2026-11-01T12:00:00Z';
const SCHEDULED_AT = isoPlus(NOW, 30 * MINUTE);
const BULK = 1200;
const dir = tempDir();
const dbPath = dir.path('snapshot.db');
const clock = testClock(NOW);
let api: TestApi;
let key: string;

const ago = (minutes: number) => isoPlus(NOW, -minutes * MINUTE);
const body = (text: string) => ({ excerpt: 'Short note.', body_markdown: text, author: 'Desk' });

const sections = [
  rawSection({ slug: 'fiber', name: 'Fiber', position: 1 }),
  rawSection({ slug: 'ultrafast', name: 'Ultrafast', position: 2 }),
  rawSection({ slug: 'bulk', name: 'Bulk', position: 3 }),
  rawSection({ slug: 'retired', name: 'Retired', position: 4, active: false }),
  // The section name is searchable too: it must not contain the words searched for below.
  { ...rawSection({ slug: 'fiber', name: '资讯', position: 1 }), locale: 'zh' as const },
];

const articles = [
  // Relevance: the same word in the title beats it in the body only, although the body hit is newer.
  rawArticle({ slug: 'title-hit', title: 'Galvanometer scanners reach new speeds', section_slug: 'fiber', published_at: ago(300), ...body('A review of recent developments in beam steering hardware.') }),
  rawArticle({ slug: 'body-hit', title: 'Weekly photonics roundup', section_slug: 'fiber', published_at: ago(10), ...body('A review of recent developments, with a galvanometer upgrade.') }),
  // Ties: identical text, so identical relevance; the newer comes first.
  rawArticle({ slug: 'tie-old', title: 'Zirconia ceramics cut cleanly', section_slug: 'ultrafast', published_at: ago(200), ...body('Same words.') }),
  rawArticle({ slug: 'tie-new', title: 'Zirconia ceramics cut cleanly', section_slug: 'ultrafast', published_at: ago(100), ...body('Same words.') }),
  // Every word required.
  rawArticle({ slug: 'laser-cutting', title: 'Laser cutting of thick steel', section_slug: 'fiber', published_at: ago(20), ...body('Nitrogen assist gas.') }),
  rawArticle({ slug: 'laser-marking', title: 'Laser marking of medical parts', section_slug: 'ultrafast', published_at: ago(21), ...body('Traceability rules.') }),
  rawArticle({ slug: 'plasma-cutting', title: 'Plasma cutting holds on', section_slug: 'fiber', published_at: ago(22), ...body('Older technology.') }),
  // Exposure: only quasar-live may ever be found before SCHEDULED_AT.
  rawArticle({ slug: 'quasar-live', title: 'Quasar live story', section_slug: 'fiber', published_at: ago(30), ...body('Visible.') }),
  rawArticle({ slug: 'quasar-draft', title: 'Quasar cladding draft', status: 'draft', section_slug: 'fiber', published_at: null, ...body('Hidden.') }),
  rawArticle({ slug: 'quasar-archived', title: 'Quasar cladding archived', status: 'archived', section_slug: 'fiber', published_at: ago(31), ...body('Hidden.') }),
  rawArticle({ slug: 'quasar-retired', title: 'Quasar cladding retired section', section_slug: 'retired', published_at: ago(32), ...body('Hidden.') }),
  rawArticle({ slug: 'quasar-nosection', title: 'Quasar cladding without section', section_slug: null, published_at: ago(33), ...body('Hidden.') }),
  rawArticle({ slug: 'quasar-ghost', title: 'Quasar cladding unknown section', section_slug: 'ghost', published_at: ago(34), ...body('Hidden.') }),
  rawArticle({ slug: 'quasar-scheduled', title: 'Quasar cladding scheduled', section_slug: 'fiber', published_at: SCHEDULED_AT, ...body('Later.') }),
  // Locales: 激光 in an en article, "laser" in a zh article.
  rawArticle({ slug: 'en-jiguang', title: 'Trade fair report 激光 special', section_slug: 'fiber', published_at: ago(40), ...body('Shanghai.') }),
  rawArticle({ locale: 'zh', slug: 'zh-a', title: '光纤激光器出口增长', section_slug: 'fiber', published_at: ago(1), ...body('出口数据。') }),
  rawArticle({ locale: 'zh', slug: 'zh-b', title: '激光切割设备销量上升', section_slug: 'fiber', published_at: ago(2), ...body('销量数据。') }),
  rawArticle({ locale: 'zh', slug: 'zh-c', title: '光纤通信网络建设', section_slug: 'fiber', published_at: ago(3), ...body('通信数据。') }),
  rawArticle({ locale: 'zh', slug: 'zh-d', title: '半导体晶圆产能扩张', section_slug: 'fiber', published_at: ago(4), ...body('产能数据。') }),
  rawArticle({ locale: 'zh', slug: 'zh-e', title: 'Laser 展会 开幕', section_slug: 'fiber', published_at: ago(5), ...body('展会。') }),
];

// More than 1000 matches, all equally relevant (same token counts), one minute apart.
const bulk = Array.from({ length: BULK }, (_, i) =>
  rawArticle({
    id: `bulk-${i}`,
    slug: `bulk-${String(i).padStart(4, '0')}`,
    title: `Cladding report ${1000 + i}`,
    section_slug: 'bulk',
    published_at: ago(1440 + i),
    ...body('Weekly numbers.'),
  }),
);

beforeAll(async () => {
  buildSnapshot(dbPath, { sections, articles: [...articles, ...bulk] });
  key = addKey(dbPath).key;
  api = await startApi({ databasePath: dbPath, clock });
});

afterAll(async () => {
  await api.close();
  dir.cleanup();
});

const strict = deepStrict(searchResultsSchema);

async function search(query: Record<string, string | number>) {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
  const res = await api.request.get(`/api/v1/search?${qs}`).set('X-API-Key', key);
  expect(res.status, `${qs}: ${res.text}`).toBe(200);
  strict.parse(res.body);
  return res.body as { data: { slug: string; locale: string; section: { slug: string }; published_at: string }[]; meta: Record<string, unknown> };
}
const slugs = (r: { data: { slug: string }[] }) => r.data.map((a) => a.slug);

describe('ranking', () => {
  it('ranks a term in the title above the same term only in the body', async () => {
    const res = await search({ q: 'galvanometer' });
    expect(slugs(res)).toEqual(['title-hit', 'body-hit']);
    expect(res.meta).toEqual({ page: 1, limit: 20, total: 2, pages: 1, locale: 'en', q: 'galvanometer', words: ['galvanometer'] });
  });

  it('breaks ties by newest published_at', async () => {
    expect(slugs(await search({ q: 'zirconia ceramics' }))).toEqual(['tie-new', 'tie-old']);
  });

  it('keeps the relevance order across pages and, among equals, newest first', async () => {
    const seen: { slug: string; published_at: string }[] = [];
    for (let page = 1; page <= 24; page++) seen.push(...(await search({ q: 'cladding', limit: 50, page })).data);
    const times = seen.map((a) => a.published_at);
    expect(times).toEqual([...times].sort().reverse());
    expect(seen[0]?.slug).toBe('bulk-0000');
    expect(seen.at(-1)?.slug).toBe(`bulk-${BULK - 1}`);
  });
});

describe('matching', () => {
  it('requires every word of the query', async () => {
    expect(slugs(await search({ q: 'laser cutting' }))).toEqual(['laser-cutting']);
    expect(slugs(await search({ q: 'cutting' })).sort()).toEqual(['laser-cutting', 'plasma-cutting']);
    expect((await search({ q: 'laser plasma' })).data).toEqual([]);
  });

  it('matches a word by its beginning: las finds laser', async () => {
    expect(slugs(await search({ q: 'las' })).sort()).toEqual(['laser-cutting', 'laser-marking']);
    expect(slugs(await search({ q: 'galv' })).sort()).toEqual(['body-hit', 'title-hit']);
    expect((await search({ q: 'aser' })).data).toEqual([]);
  });

  it('ignores case', async () => {
    expect(slugs(await search({ q: 'GALVANOMETER' }))).toEqual(['title-hit', 'body-hit']);
  });

  it('filters by section; an unknown or inactive section gives an empty result', async () => {
    expect(slugs(await search({ q: 'laser', section: 'fiber' }))).toEqual(['laser-cutting']);
    expect(slugs(await search({ q: 'laser', section: 'ultrafast' }))).toEqual(['laser-marking']);
    for (const section of ['retired', 'ghost', 'nope']) {
      const res = await search({ q: 'quasar', section });
      expect(res.data).toEqual([]);
      expect(res.meta).toMatchObject({ total: 0, pages: 0 });
    }
  });
});

describe('totals and pages over more than 1000 matches', () => {
  it('counts every match exactly', async () => {
    const res = await search({ q: 'cladding', limit: 50 });
    expect(res.meta).toEqual({ page: 1, limit: 50, total: BULK, pages: 24, locale: 'en', q: 'cladding', words: ['cladding'] });
    const odd = await search({ q: 'cladding', limit: 7, page: 172 });
    expect(odd.meta).toMatchObject({ total: BULK, pages: 172 });
    expect(odd.data).toHaveLength(BULK - 171 * 7);
  });

  it('returns each match exactly once across the pages, and an empty page past the last', async () => {
    const all = new Set<string>();
    for (let page = 1; page <= 24; page++) {
      const res = await search({ q: 'cladding', limit: 50, page });
      expect(res.data).toHaveLength(50);
      for (const slug of slugs(res)) all.add(slug);
    }
    expect(all.size).toBe(BULK);
    expect([...all].every((s) => s.startsWith('bulk-'))).toBe(true);
    const past = await search({ q: 'cladding', limit: 50, page: 25 });
    expect(past.data).toEqual([]);
    expect(past.meta).toMatchObject({ page: 25, total: BULK, pages: 24 });
  });

  it('gives the same total through the engine itself', async () => {
    const engine = new SqliteFtsEngine();
    try {
      const session = api.store.session();
      const now = Date.parse(NOW);
      const view = new Catalog().view(session, 'en');
      const page = await engine.search(session, {
        locale: 'en',
        q: 'cladding',
        section: undefined,
        activeSections: view.sectionSlugs,
        exposure: view.exposure(now, undefined),
        page: 2,
        limit: 5,
        now,
        contentTag: 'direct',
      });
      expect(page.total).toBe(BULK);
      expect(page.ids).toHaveLength(5);
    } finally {
      await engine.close();
    }
  });
});

describe('exposure', () => {
  it('returns only exposed articles, and the total agrees', async () => {
    const res = await search({ q: 'quasar' });
    expect(slugs(res)).toEqual(['quasar-live']);
    expect(res.meta).toMatchObject({ total: 1, pages: 1 });
    // The hidden ones also carry "cladding": the bulk total is not inflated by them.
    expect((await search({ q: 'cladding', limit: 1 })).meta.total).toBe(BULK);
    expect((await search({ q: 'quasar cladding' })).data).toEqual([]);
  });

  it('finds a scheduled article once its time comes, without a sync', async () => {
    clock.set(SCHEDULED_AT);
    try {
      const res = await search({ q: 'quasar' });
      expect(slugs(res).sort()).toEqual(['quasar-live', 'quasar-scheduled']);
      expect(res.meta.total).toBe(2);
      expect((await search({ q: 'cladding', limit: 1 })).meta.total).toBe(BULK + 1);
    } finally {
      clock.set(NOW);
    }
    expect((await search({ q: 'quasar' })).meta.total).toBe(1);
  });
});

describe('Chinese and locales', () => {
  it('finds 激光 in 光纤激光器 and in 激光切割', async () => {
    const res = await search({ q: '激光', locale: 'zh' });
    expect(slugs(res).sort()).toEqual(['zh-a', 'zh-b']);
    expect(res.meta).toMatchObject({ total: 2, locale: 'zh', q: '激光' });
  });

  it('finds with 光纤 only the articles that contain it', async () => {
    expect(slugs(await search({ q: '光纤', locale: 'zh' })).sort()).toEqual(['zh-a', 'zh-c']);
    expect(slugs(await search({ q: '光纤激光器', locale: 'zh' }))).toEqual(['zh-a']);
    expect(slugs(await search({ q: '激光切割', locale: 'zh' }))).toEqual(['zh-b']);
    expect((await search({ q: '量子', locale: 'zh' })).data).toEqual([]);
  });

  it('keeps zh and en apart', async () => {
    const en = await search({ q: '激光' });
    expect(slugs(en)).toEqual(['en-jiguang']);
    const zh = await search({ q: 'laser', locale: 'zh' });
    expect(slugs(zh)).toEqual(['zh-e']);
    expect(zh.data.every((a) => a.locale === 'zh')).toBe(true);
    const enLaser = await search({ q: 'laser' });
    expect(enLaser.data.every((a) => a.locale === 'en')).toBe(true);
    expect(slugs(enLaser)).not.toContain('zh-e');
  });
});

describe('hostile and odd queries', () => {
  const FTS_SYNTAX = [
    '"', '""', '"""', '"laser', 'laser"', '"laser cutting"', 'laser*', '*laser', '**', 'laser AND cutting', 'laser OR plasma',
    'NOT laser', 'laser NOT cutting', 'NEAR(laser cutting)', 'NEAR(', 'NEAR(laser, 2)', '-laser', 'laser -cutting', '--',
    'title:laser', ':laser', 'laser:', '{title body}: laser', '(laser', 'laser)', '^laser', 'laser +cutting', "laser'",
    "'; DROP TABLE articles; --", 'a"b"c"', '\\"', '%%', '\u0000\u0000', 'laser\u0000cutting',
  ];

  it.each(FTS_SYNTAX)('answers %j with a 200, never a 500', async (q) => {
    const res = await api.request.get(`/api/v1/search?q=${encodeURIComponent(q)}`).set('X-API-Key', key);
    if (q.trim().length < 2) {
      expectError(res, 400, 'invalid_parameter', 'q');
      return;
    }
    expect(res.status, res.text).toBe(200);
    strict.parse(res.body);
  });

  it('treats FTS5 operators as plain words', async () => {
    expect(slugs(await search({ q: '"laser' })).sort()).toEqual(['laser-cutting', 'laser-marking']);
    expect(slugs(await search({ q: 'laser -cutting' }))).toEqual(['laser-cutting']);
    expect(slugs(await search({ q: '(laser cutting)' }))).toEqual(['laser-cutting']);
    // Nothing was dropped by the injection attempt.
    expect((await search({ q: 'cladding', limit: 1 })).meta.total).toBe(BULK);
  });

  it.each(['!!', '??', '——', '...', '* *', '。。', '🔬🔬'])('answers punctuation-only %j with 200 and no results', async (q) => {
    const res = await search({ q });
    expect(res.data).toEqual([]);
    expect(res.meta).toEqual({ page: 1, limit: 20, total: 0, pages: 0, locale: 'en', q, words: [] });
  });

  it('quotes every word it passes to FTS5, and has no query for a term without words', () => {
    const matchExpression = (q: string) => matchFor(normalizeQuery(q).words);
    expect(matchExpression('laser "cutting')).toBe('"laser"* "cutting"*');
    expect(matchExpression('NEAR(laser')).toBe('"near"* "laser"*');
    expect(matchExpression('!!')).toBeUndefined();
    // Words of two characters or more: normalizeQuery drops one-character ones.
    for (const q of ['title:laser', 'ab"cd', "xy'zw"]) {
      const expr = matchExpression(q) as string;
      // Every term is a quoted string with inner quotes doubled, followed by the prefix star.
      expect(expr).toMatch(/^("(?:[^"]|"")*"\*)( "(?:[^"]|"")*"\*)*$/);
    }
  });
});
