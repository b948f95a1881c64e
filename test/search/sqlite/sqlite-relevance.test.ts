import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeQuery } from '../../../src/search/normalize.js';
import { SqliteFtsEngine } from '../../../src/search/sqlite/sqlite-fts.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { isoPlus, MINUTE } from '../../support/contract-helpers.js';

const NOW = '2026-11-01T12:00:00Z';
const COMMON = 60;
const ago = (minutes: number) => isoPlus(NOW, -minutes * MINUTE);
const text = (body: string) => ({ excerpt: 'Plant note.', body_markdown: body, author: 'Desk' });

const articles = [
  // Old, and its title is exactly the query.
  rawArticle({ slug: 'exact-title', title: 'Heliostat', section_slug: 'energy', published_at: ago(90_000), ...text('Mirrors.') }),
  rawArticle({ slug: 'long-title', title: 'Heliostat makers report another quarter of growth in orders', section_slug: 'energy', published_at: ago(5), ...text('Orders.') }),
  // A rare word, deep in the body of an old article.
  rawArticle({ slug: 'rare', title: 'Plant visit', section_slug: 'energy', published_at: ago(80_000), ...text('The heliostat field uses a gyrotron for tests.') }),
  // Many equal matches in the body only: newest first among them.
  ...Array.from({ length: COMMON }, (_, i) =>
    rawArticle({ slug: `body-${String(i).padStart(3, '0')}`, title: `Plant report ${i}`, section_slug: 'energy', published_at: ago(100 + i), ...text('Another heliostat update.') }),
  ),
];

/** The same checks with every match ranked, and with only a bounded set ranked (common terms). */
for (const [mode, rankAllMax, commonMin] of [
  ['every match ranked', 5_000, 2_000],
  ['common term: bounded ranking', 8, 2_000],
  // Every word counts as common: scored from title and excerpt, never by the index.
  ['common words scored from title and excerpt, every match ranked', 5_000, 1],
  ['common words scored from title and excerpt, bounded ranking', 8, 1],
] as const) {
  describe(`relevance, ${mode}`, () => {
    const dir = tempDir('search-relevance-');
    const dbPath = dir.path('snapshot.db');
    let api: TestApi;
    let key: string;

    beforeAll(async () => {
      buildSnapshot(dbPath, { sections: [rawSection({ slug: 'energy', name: 'Energy', position: 1 })], articles });
      key = addKey(dbPath).key;
      api = await startApi({ databasePath: dbPath, clock: testClock(NOW), engine: new SqliteFtsEngine({ rankAllMax, commonMin }) });
    });

    afterAll(async () => {
      await api.close();
      dir.cleanup();
    });

    const search = async (query: Record<string, string | number>) => {
      const res = await api.request.get('/api/v1/search').query(query).set('X-API-Key', key);
      expect(res.status, res.text).toBe(200);
      return res.body as { data: { slug: string }[]; meta: { total: number } };
    };
    const slugs = (r: { data: { slug: string }[] }) => r.data.map((a) => a.slug);

    it('ranks an exact title match first, even an old one', async () => {
      const res = await search({ q: 'heliostat', limit: 3 });
      expect(slugs(res)[0]).toBe('exact-title');
      expect(slugs(res)[1]).toBe('long-title');
    });

    it('finds the one article with a rare term', async () => {
      const res = await search({ q: 'gyrotron' });
      expect(slugs(res)).toEqual(['rare']);
      expect(res.meta.total).toBe(1);
    });

    it('puts equal matches newest first, and counts every match exactly once', async () => {
      const seen: string[] = [];
      for (let page = 1; page <= 4; page++) seen.push(...slugs(await search({ q: 'heliostat', limit: 20, page })));
      expect(seen).toHaveLength(COMMON + 3);
      expect(new Set(seen).size).toBe(COMMON + 3);
      const body = seen.filter((s) => s.startsWith('body-'));
      expect(body).toEqual([...body].sort());
      expect((await search({ q: 'heliostat' })).meta.total).toBe(COMMON + 3);
    });
  });
}

describe('query normalisation', () => {
  it('splits both locales the same way, drops repeats and one-character words, keeps ten words', () => {
    expect(normalizeQuery('Laser LASER a b c cutting')).toEqual({ words: ['laser', 'cutting'], text: 'laser cutting', dropped: 4 });
    expect(normalizeQuery('"laser" -cutting NEAR(beam*)').words).toEqual(['laser', 'cutting', 'near', 'beam']);
    expect(normalizeQuery('a b c d e f g h i j k l m n o p').words).toEqual([]);
    const many = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');
    expect(normalizeQuery(many).words).toHaveLength(10);
    // A Chinese character is a word even alone (飞秒 segments as 飞 + 秒).
    expect(normalizeQuery('飞秒激光').words).toEqual(['飞', '秒', '激光']);
    expect(normalizeQuery('光纤 激光').words).toEqual(['光纤', '激光']);
  });
});
