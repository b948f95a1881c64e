import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/content/catalog.js';
import { MAX_SEARCH_DEPTH, searchArticles } from '../../../src/content/search.js';
import { SnapshotStore } from '../../../src/db/snapshot/snapshot-store.js';
import type { SearchEngine } from '../../../src/search/engine.js';
import { SqliteFtsEngine } from '../../../src/search/sqlite/sqlite-fts.js';
import { memoryLogger } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { startFakeMeilisearch, type FakeMeilisearch } from '../../fakes/fake-meilisearch.js';
import { meiliFixture, type MeiliFixture } from '../../support/meili-fixture.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { openReader } from '../../../src/db/sqlite/connection.js';

/*
 * The search depth cap (src/content/search.ts), the same on every engine. Exercised with a
 * small cap over a small corpus: the rule does not depend on the number.
 */

const NOW = Date.parse('2026-11-01T12:00:00Z');
const HITS = 30;
const DEPTH = 20;
const dir = tempDir('search-depth-');
const dbPath = dir.path('snapshot.db');
let fake: FakeMeilisearch;
let meili: MeiliFixture;
let store: SnapshotStore;
const catalog = new Catalog();

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber', name: 'Alpha' }), { ...rawSection({ slug: 'fiber', name: '资讯' }), locale: 'zh' as const }],
    articles: Array.from({ length: HITS }, (_, i) =>
      rawArticle({ slug: `deep-${String(i).padStart(2, '0')}`, title: 'Cladding report', section_slug: 'fiber', published_at: new Date(NOW - (i + 1) * 60_000).toISOString().replace('.000Z', 'Z') }),
    ),
    now: NOW,
  });
  fake = await startFakeMeilisearch({ taskDelayMs: 1 });
  meili = meiliFixture({ host: fake.url }, { label: 'depth' });
  await meili.indexSnapshot(dbPath);
  store = new SnapshotStore(dbPath, 2_000, memoryLogger('silent').logger, openReader);
});

afterAll(async () => {
  store?.close();
  await fake?.close();
  dir.cleanup();
});

const engines: [string, () => SearchEngine][] = [
  ['sqlite', () => new SqliteFtsEngine()],
  ['meilisearch (fake)', () => meili.engine()],
];

describe.each(engines)('search depth on %s', (_name, make) => {
  const search = async (page: number, limit: number) => {
    const engine = make();
    const view = catalog.view(store.session(), 'en');
    const result = await searchArticles(store, view, engine, { locale: 'en', q: 'cladding', page, limit, now: NOW }, DEPTH);
    return { slugs: result.articles.map((a) => a.slug), total: result.total };
  };

  it('returns hits up to the cap as usual, with the true total', async () => {
    expect(await search(2, 10)).toEqual({ slugs: Array.from({ length: 10 }, (_, i) => `deep-${String(10 + i).padStart(2, '0')}`), total: HITS });
  });

  it('cuts a page that straddles the cap at the cap', async () => {
    expect(await search(3, 8)).toEqual({ slugs: ['deep-16', 'deep-17', 'deep-18', 'deep-19'], total: HITS });
  });

  it('answers a page past the cap like a page past the last one: nothing, and the true total', async () => {
    expect(await search(3, 10)).toEqual({ slugs: [], total: HITS });
    expect(await search(1_000, 50)).toEqual({ slugs: [], total: HITS });
  });
});

it('caps search at 10,000 hits in the service', () => {
  expect(MAX_SEARCH_DEPTH).toBe(10_000);
});
