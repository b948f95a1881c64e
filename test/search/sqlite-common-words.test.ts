import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openReader, openWriter } from '../../src/db/sqlite/connection.js';
import { RankedSearch } from '../../src/search/sqlite/sqlite-fts.js';
import { SnapshotViews } from '../../src/search/sqlite/pool/snapshot-views.js';
import { SnapshotStore } from '../../src/db/snapshot/snapshot-store.js';
import { createLogger } from '../../src/logger.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir, writeSnapshot } from '../support/snapshot-fixture.js';

/*
 * Champion lists of the embedded engine (src/search/sqlite/term-sets.ts): a search thread
 * precomputes, in its idle time after each sync, the id lists of the index's common words, so
 * that a query of common words is fast from its first use. What it plans, that the lists it
 * reads give the same answers, that a changed snapshot is planned again, and the memory bound.
 */

const dir = tempDir('common-words-');
const dbPath = dir.path('snapshot.db');
const sections = [rawSection({ slug: 'fiber', name: 'Fiber', position: 1 })];
// "laser" in every article, "beam" in 30, "optics" in 10, "gyrotron" in 2.
const articles = Array.from({ length: 40 }, (_, i) =>
  rawArticle({
    slug: `a-${i}`,
    title: `Laser ${i % 3 === 0 ? 'beam' : 'note'} ${i}`,
    section_slug: 'fiber',
    published_at: `2026-10-${String(1 + (i % 28)).padStart(2, '0')}T00:00:00Z`,
    excerpt: 'A laser story.',
    body_markdown: `${i < 30 ? 'Beam shaping.' : ''} ${i < 10 ? 'Optics for it.' : ''} ${i < 2 ? 'A gyrotron too.' : ''}`,
  }),
);
const COMMON_MIN = 10;
const options = { cacheBytes: 1 << 20, rankAllMax: 4, commonMin: COMMON_MIN, termBytes: 1 << 20 };

beforeAll(() => buildSnapshot(dbPath, { sections, articles }));
afterAll(() => dir.cleanup());

const now = Date.parse('2026-11-01T00:00:00Z');

function withEngine<T>(termBytes: number, fn: (ranked: RankedSearch, store: SnapshotStore) => T, path = dbPath): T {
  const store = new SnapshotStore(path, 5_000, createLogger({ level: 'silent' }));
  try {
    return fn(new RankedSearch({ ...options, termBytes }), store);
  } finally {
    store.close();
  }
}

function search(ranked: RankedSearch, store: SnapshotStore, q: string) {
  const session = store.session();
  const table = new SnapshotViews().table(session, 'en');
  return ranked.page(session.db, { q, section: undefined, contentTag: `${table.contentTag(now)}.${q}`, page: 1, limit: 50 }, table.exposure(now, undefined));
}

describe('common words precomputed by a search thread', () => {
  it('plans the terms in at least SEARCH_COMMON_MIN articles, most frequent first, and no rarer one', () => {
    withEngine(1 << 20, (ranked, store) => {
      const words = ranked.planCommon(store.session().db);
      // Every column counts (the author "Doe" and the section "Fiber" are in all 40).
      expect(words).toEqual(expect.arrayContaining(['laser', 'beam', 'optics', 'doe', 'fiber']));
      expect(words).not.toContain('gyrotron');
      expect(words.indexOf('laser')).toBeLessThan(words.indexOf('beam'));
      expect(words.indexOf('beam')).toBeLessThan(words.indexOf('optics'));
    });
  });

  it('reads each planned word into the cache, and answers exactly as without it', () => {
    const expected = withEngine(1 << 20, (ranked, store) => ['laser beam', 'optics', 'beam optics laser'].map((q) => search(ranked, store, q)));
    withEngine(1 << 20, (ranked, store) => {
      const db = store.session().db;
      const words = ranked.planCommon(db);
      for (const word of words) expect(ranked.precompute(db, word)).toBe(true);
      // Each word's list and its title list.
      expect(ranked.termStats().entries).toBe(2 * words.length);
      const misses = ranked.termStats().misses;
      expect(['laser beam', 'optics', 'beam optics laser'].map((q) => search(ranked, store, q))).toEqual(expected);
      // Every list those queries needed was there already.
      expect(ranked.termStats().misses).toBe(misses);
      // "beam" in the title of every third article or in the body of the first 30.
      expect(expected[0]!.total).toBe(34);
    });
  });

  it('plans nothing again for the same snapshot, and plans again once the snapshot changed', () => {
    const changing = dir.path('changing.db');
    buildSnapshot(changing, { sections, articles });
    withEngine(1 << 20, (ranked, store) => {
      const first = ranked.planCommon(store.session().db);
      expect(first.length).toBeGreaterThan(0);
      expect(ranked.planCommon(store.session().db)).toEqual([]);
      const writer = openWriter(changing, { busyTimeoutMs: 5_000 });
      try {
        writeSnapshot(writer, { sections, articles: [...articles, rawArticle({ slug: 'late', title: 'Laser late', section_slug: 'fiber' })] });
      } finally {
        writer.$client.close();
      }
      // A list read before the change would be stale: precompute refuses it.
      expect(ranked.precompute(store.session().db, first[0]!)).toBe(false);
      expect(ranked.planCommon(store.session().db)).toEqual(first);
    }, changing);
  });

  it('plans no more than half of SEARCH_TERM_CACHE_MB', () => {
    withEngine(1 << 20, (ranked, store) => {
      const all = ranked.planCommon(store.session().db);
      withEngine(64, (small, smallStore) => {
        const few = small.planCommon(smallStore.session().db);
        expect(few.length).toBeLessThan(all.length);
        expect(all.slice(0, few.length)).toEqual(few);
      });
    });
  });

  it('opens the vocabulary on a read-only connection without writing to the snapshot', () => {
    const reader = openReader(dbPath, { busyTimeoutMs: 5_000 });
    try {
      const ranked = new RankedSearch(options);
      expect(ranked.planCommon(reader)).toContain('laser');
    } finally {
      reader.$client.close();
    }
  });
});
