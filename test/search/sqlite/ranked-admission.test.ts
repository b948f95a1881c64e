import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SnapshotStore } from '../../../src/db/snapshot/snapshot-store.js';
import { openReader } from '../../../src/db/sqlite/connection.js';
import { createLogger } from '../../../src/logger.js';
import { SnapshotViews } from '../../../src/search/sqlite/pool/snapshot-views.js';
import { RankedSearch } from '../../../src/search/sqlite/sqlite-fts.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';

/*
 * What a search thread keeps between queries: a ranking only when it has a page after the one
 * asked (the ranked cache serves paging; a repeated page is the response cache's), and a
 * word's list only when some article has the word. Never-repeated queries of unknown words
 * once filled both caches to their budgets with nothing (issue 38: +47 MB of the thread's heap
 * over 20,000 distinct q).
 */

const NOW = Date.parse('2026-11-01T12:00:00Z');
const dir = tempDir('ranked-admission-');
const dbPath = dir.path('snapshot.db');
let store: SnapshotStore;

beforeAll(() => {
  const articles = Array.from({ length: 30 }, (_, i) =>
    rawArticle({ slug: `osprey-${i}`, title: i === 0 ? 'Osprey kingfisher' : `Osprey report ${i}`, section_slug: 'birds', published_at: new Date(NOW - (i + 1) * 60_000).toISOString() }),
  );
  buildSnapshot(dbPath, { sections: [rawSection({ slug: 'birds' })], articles, now: NOW });
  store = new SnapshotStore(dbPath, 5_000, createLogger({ level: 'silent' }), openReader);
});
afterAll(() => {
  store?.close();
  dir.cleanup();
});

function searcher() {
  const engine = new RankedSearch({ cacheBytes: 1 << 20, rankAllMax: 2_000, commonMin: 2_000, termBytes: 1 << 20 });
  const session = store.session();
  const table = new SnapshotViews().table(session, 'en');
  const page = (q: string, pageNumber = 1, limit = 20) =>
    engine.page(session.db, { q, section: undefined, contentTag: table.contentTag(NOW), page: pageNumber, limit }, table.exposure(NOW, undefined));
  return { engine, page };
}

describe('what a search thread keeps', () => {
  it('keeps a ranking that has a next page, and serves that page from it', () => {
    const { engine, page } = searcher();
    expect(page('osprey').total).toBe(30);
    expect(engine.stats()).toMatchObject({ entries: 1, misses: 1, hits: 0 });
    expect(page('osprey', 2).ids).toHaveLength(10);
    expect(engine.stats()).toMatchObject({ entries: 1, hits: 1 });
  });

  it('keeps no ranking without a next page: one page of matches, the last page, or none', () => {
    const { engine, page } = searcher();
    expect(page('kingfisher').total).toBe(1);
    expect(page('osprey', 1, 30).total).toBe(30);
    expect(page('zqx123unknown').total).toBe(0);
    expect(engine.stats()).toMatchObject({ entries: 0, bytes: 0 });
  });

  it('keeps the lists of words that match, not of words no article has', () => {
    const { engine, page } = searcher();
    page('kingfisher');
    const known = engine.termStats().entries;
    expect(known).toBeGreaterThan(0);
    for (let i = 0; i < 50; i++) page(`zq${i}x`);
    expect(engine.termStats().entries).toBe(known);
  });
});
