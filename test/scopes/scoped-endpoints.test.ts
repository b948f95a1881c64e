import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setKeyScope } from '../../src/keys/manage.js';
import { addKey, startApi, testClock, withKeys, type TestApi } from '../support/api.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { isoPlus, MINUTE } from '../support/contract-helpers.js';
import { meiliEngineSetup, type EngineSetup } from '../support/meili-fixture.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { startFakeMeilisearch } from '../fakes/fake-meilisearch.js';
import { getJson, listed, type Keyed } from './scope-support.js';

/*
 * What a scoped key sees on every endpoint (the contract's "What each key may see"), beside
 * an unscoped key asking the same URLs, on both search engines: totals, sections, a 404 for an
 * article outside the scope, the 403 for a locale outside it, and no cached answer (the
 * response cache, the fast path, the search caches) crossing from one scope to another, even
 * when the scope changes between two identical requests.
 */

const NOW = '2026-11-01T12:00:00Z';
const past = (m: number) => isoPlus(NOW, -m * MINUTE);

const sections = [
  rawSection({ slug: 'lasers', name: 'Lasers', position: 1 }),
  rawSection({ slug: 'optics', name: 'Optics', position: 2 }),
  rawSection({ slug: 'markets', name: 'Markets', position: 3 }),
  { ...rawSection({ slug: 'lasers', name: '激光', position: 1 }), locale: 'zh' as const },
  { ...rawSection({ slug: 'markets', name: '市场', position: 2 }), locale: 'zh' as const },
];
const photon = (slug: string, section: string, minutes: number, locale: 'en' | 'zh' = 'en') =>
  rawArticle({ slug, locale, section_slug: section, title: `Photon story ${slug}`, body_markdown: `The photon source of ${slug}.`, published_at: past(minutes) });
const articles = [
  photon('l1', 'lasers', 1),
  photon('l2', 'lasers', 2),
  photon('l3', 'lasers', 3),
  photon('o1', 'optics', 4),
  photon('m1', 'markets', 5),
  photon('m2', 'markets', 6),
  photon('zl1', 'lasers', 1, 'zh'),
  photon('zm1', 'markets', 2, 'zh'),
];

interface Engine {
  name: string;
  setup(): Promise<EngineSetup | undefined>;
}

const engines: Engine[] = [
  { name: 'embedded engine', setup: async () => undefined },
  {
    name: 'meilisearch (fake server)',
    setup: async () => {
      const fake = await startFakeMeilisearch({ masterKey: 'scopes-master', taskDelayMs: 1 });
      return meiliEngineSetup({ host: fake.url, apiKey: 'scopes-master' }, { label: 'scopes', after: () => fake.close() });
    },
  },
];

describe.each(engines)('key scopes on every endpoint, $name', (engine) => {
  const dir = tempDir('scopes-');
  const dbPath = dir.path('snapshot.db');
  const clock = testClock(NOW);
  let api: TestApi;
  let setup: EngineSetup | undefined;
  let all: Keyed;
  let two: Keyed & { id: number };
  let zh: Keyed;

  beforeAll(async () => {
    buildSnapshot(dbPath, { sections, articles });
    setup = await engine.setup();
    await setup?.index(dbPath);
    api = setup ? await setup.startApi(dbPath, clock) : await startApi({ databasePath: dbPath, clock });
    all = { url: api.url, key: addKey(dbPath, 'Everything').key };
    const created = addKey(dbPath, 'Trade Site', { sections: ['lasers', 'optics'] });
    two = { url: api.url, key: created.key, id: created.id };
    zh = { url: api.url, key: addKey(dbPath, 'Chinese Portal', { locales: ['zh'] }).key };
  }, 60_000);

  afterAll(async () => {
    await api.close();
    await setup?.cleanup();
    dir.cleanup();
  });

  it('answers 403 locale_not_allowed on every endpoint for a locale outside the scope, naming the allowed ones', async () => {
    for (const path of [
      '/api/v1/articles?locale=en',
      '/api/v1/articles/l1?locale=en',
      '/api/v1/categories?locale=en',
      '/api/v1/search?locale=en&q=photon',
      '/api/v1/changes?locale=en',
      // The default locale is en: a zh-only key must say so.
      '/api/v1/articles',
    ]) {
      const { status, body, headers } = await getJson<{ error: { code: string; message: string } }>(zh, path);
      expect(status, path).toBe(403);
      expect(body.error.code).toBe('locale_not_allowed');
      expect(body.error.message).toMatch(/zh/);
      expect(headers.get('cache-control')).toBe('no-store');
    }
    const { status, body } = await getJson<{ meta: { total: number } }>(zh, '/api/v1/articles?locale=zh');
    expect(status).toBe(200);
    expect(body.meta.total).toBe(2);
  });

  it('lists, counts and searches only the sections of the scope; other sections are empty; an article outside is not_found', async () => {
    for (let round = 0; round < 2; round++) {
      // Twice each, alternating keys: the second round is answered from the caches.
      const whole = await getJson<{ meta: { total: number } }>(all, '/api/v1/articles?locale=en');
      expect(whole.body.meta.total).toBe(6);
      const scoped = await getJson<{ data: { slug: string }[]; meta: { total: number } }>(two, '/api/v1/articles?locale=en');
      expect(scoped.body.meta.total).toBe(4);
      expect(scoped.body.data.map((a) => a.slug)).toEqual(['l1', 'l2', 'l3', 'o1']);
      expect(scoped.headers.get('vary')).toMatch(/X-API-Key/i);
      expect((await getJson<{ meta: { total: number } }>(two, '/api/v1/articles?locale=en&section=markets')).body.meta.total).toBe(0);
      expect((await getJson<{ meta: { total: number } }>(all, '/api/v1/articles?locale=en&section=markets')).body.meta.total).toBe(2);
      const outside = await getJson<{ error: { code: string } }>(two, '/api/v1/articles/m1?locale=en');
      expect(outside.status).toBe(404);
      expect(outside.body.error.code).toBe('not_found');
      expect((await getJson(all, '/api/v1/articles/m1?locale=en')).status).toBe(200);
      expect((await getJson(two, '/api/v1/articles/l1?locale=en')).status).toBe(200);
      const categories = await getJson<{ data: { slug: string }[]; meta: { total: number } }>(two, '/api/v1/categories?locale=en');
      expect(categories.body.data.map((s) => s.slug)).toEqual(['lasers', 'optics']);
      expect(categories.body.meta.total).toBe(2);
      expect((await getJson<{ data: unknown[] }>(all, '/api/v1/categories?locale=en')).body.data).toHaveLength(3);
      const hits = await getJson<{ data: { slug: string }[]; meta: { total: number } }>(two, '/api/v1/search?locale=en&q=photon&limit=2');
      expect(hits.status).toBe(200);
      expect(hits.body.meta.total).toBe(4);
      expect(hits.body.data.every((a) => a.slug.startsWith('l') || a.slug.startsWith('o'))).toBe(true);
      expect((await getJson<{ meta: { total: number } }>(all, '/api/v1/search?locale=en&q=photon')).body.meta.total).toBe(6);
      expect((await getJson<{ meta: { total: number } }>(two, '/api/v1/search?locale=en&q=photon&section=markets')).body.meta.total).toBe(0);
      expect((await getJson<{ meta: { total: number } }>(two, '/api/v1/search?locale=zh&q=photon')).body.meta.total).toBe(1);
      // The change feed (built by syncs, not by this fixture) has its own suites: scoped-feed-*.test.ts.
    }
  });

  it('applies a scope change from the next request, past every cache', async () => {
    const before = await getJson<{ meta: { total: number } }>(two, '/api/v1/articles?locale=en');
    expect(before.body.meta.total).toBe(4);
    const etag = before.headers.get('etag');
    const search = '/api/v1/search?locale=en&q=photon';
    expect((await getJson<{ meta: { total: number } }>(two, search)).body.meta.total).toBe(4);
    try {
      withKeys(dbPath, (db) => setKeyScope(db, two.id, { sections: ['markets'] }, () => Date.now()));
      const after = await getJson<{ data: { slug: string }[]; meta: { total: number } }>(two, '/api/v1/articles?locale=en');
      expect(after.body.data.map((a) => a.slug)).toEqual(['m1', 'm2']);
      expect(after.headers.get('etag')).not.toBe(etag);
      expect((await getJson<{ meta: { total: number } }>(two, search)).body.meta.total).toBe(2);
      expect((await getJson(two, '/api/v1/articles/m1?locale=en')).status).toBe(200);
      expect((await getJson(two, '/api/v1/articles/l1?locale=en')).status).toBe(404);
      expect((await listed(two, 'en')).size).toBe(2);
      // The other keys are untouched.
      expect((await listed(all, 'en')).size).toBe(6);
    } finally {
      withKeys(dbPath, (db) => setKeyScope(db, two.id, { sections: ['lasers', 'optics'] }, () => Date.now()));
    }
    expect((await getJson<{ meta: { total: number } }>(two, '/api/v1/articles?locale=en')).body.meta.total).toBe(4);
  });
});
