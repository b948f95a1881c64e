import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SnapshotStore } from '../../../src/db/snapshot/snapshot-store.js';
import { createLogger } from '../../../src/logger.js';
import { SnapshotViews } from '../../../src/search/sqlite/pool/snapshot-views.js';
import { RankedSearch } from '../../../src/search/sqlite/sqlite-fts.js';
import { isoPlus, MINUTE } from '../../support/contract-helpers.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { openReader, openWriter } from '../../../src/db/sqlite/connection.js';
import { buildSnapshot, tempDir, writeSnapshot } from '../../support/snapshot-fixture.js';

/*
 * The ordering rule of a large match set (more exposed matches than SEARCH_RANK_ALL_MAX), as
 * src/search/sqlite/sqlite-rank.ts documents it, pinned on a small corpus with rankAllMax 12
 * (a scored window of 3): matches with every word in the title first, then the others; within
 * each part the newest window ranked by score, then the rest newest first; the window never
 * reaches below the part's 2×window-th highest id; the total exact. The same with the words
 * scored by the index (bm25) and from title and excerpt (common words), and in a section.
 */

const NOW = '2026-11-01T12:00:00Z';
const ago = (minutes: number) => isoPlus(NOW, -minutes * MINUTE);
const plain = { excerpt: 'Plant note.', body_markdown: 'Another heliostat update from the plant.', author: 'Desk' };
const at = (slug: string, title: string, minutes: number, more: Partial<Parameters<typeof rawArticle>[0]> = {}) =>
  rawArticle({ slug, title, section_slug: 'energy', published_at: ago(minutes), ...plain, ...more });

// Listed oldest first, so that ids grow with recency as a sync makes them; except the first,
// an old article republished now: the newest of all, with the lowest id.
const articles = [
  at('t-rep', 'Heliostat', 1),
  at('t-6', 'Heliostat plant six opens its doors to visitors', 60),
  at('t-5', 'Heliostat plant five opens its doors to visitors', 50),
  at('t-4', 'Heliostat plant four opens its doors to visitors', 40),
  // The best title of all, but outside the window: it keeps its place among the rest.
  at('t-3', 'Heliostat', 30),
  at('t-2', 'Heliostat', 20),
  at('t-1', 'Heliostat makers report another quarter of growth in orders', 10),
  at('o-6', 'Plant report six', 65),
  at('o-5', 'Plant report five', 55),
  // The word in the excerpt too: better than a body-only match, but outside the window.
  at('o-4', 'Plant report four', 45, { excerpt: 'Heliostat note.' }),
  at('o-3', 'Plant report three', 35, { excerpt: 'Heliostat note.' }),
  at('o-2', 'Plant report two', 25),
  at('o-1', 'Plant report one', 15),
  at('unrelated', 'Plant report', 5, { body_markdown: 'Nothing to see.' }),
  // Newest ids, never exposed in "energy": scheduled for later, or in another section.
  at('t-later', 'Heliostat', -60),
  at('o-later', 'Plant report later', -30),
  at('t-storage', 'Heliostat', 3, { section_slug: 'storage' }),
  at('o-storage', 'Plant report storage', 2, { section_slug: 'storage' }),
];
const sections = [rawSection({ slug: 'energy', name: 'Energy', position: 1 }), rawSection({ slug: 'storage', name: 'Storage', position: 2 })];

// rankAllMax 12: a window of 3, never below the part's 6th highest id. Titled (7): the window
// is the 3 newest, t-rep, t-1, t-2; t-rep has the lowest id and stays out, t-2's exact title
// beats t-1's long one; the rest newest first, t-rep first. Others (6): the window is o-1,
// o-2, o-3, where o-3's excerpt match wins; equal o-1 and o-2 newest first; then the rest.
const EXPECTED = ['t-2', 't-1', 't-rep', 't-3', 't-4', 't-5', 't-6', 'o-3', 'o-1', 'o-2', 'o-4', 'o-5', 'o-6'];
// Without the section, the storage articles (the newest ids) join and move the 6th highest ids
// up: titled, the window is t-rep (left out), t-storage and t-1, where t-storage's exact title
// wins; others, the window is o-storage, o-1 and o-2, equal, so newest first, o-3 now outside.
const EXPECTED_ALL = ['t-storage', 't-1', 't-rep', 't-2', 't-3', 't-4', 't-5', 't-6', 'o-storage', 'o-1', 'o-2', 'o-3', 'o-4', 'o-5', 'o-6'];

const dir = tempDir('rank-window-');
const dbPath = dir.path('snapshot.db');
const now = Date.parse(NOW);
let store: SnapshotStore;

beforeAll(() => {
  buildSnapshot(dbPath, { sections, articles, now });
  store = new SnapshotStore(dbPath, 5_000, createLogger({ level: 'silent' }), openReader);
});
afterAll(() => {
  store?.close();
  dir.cleanup();
});

function ranked(commonMin: number, section: string | undefined, from = store): { slugs: string[]; total: number } {
  const engine = new RankedSearch({ cacheBytes: 1 << 20, rankAllMax: 12, commonMin, termBytes: 1 << 20 });
  const session = from.session();
  const table = new SnapshotViews().table(session, 'en');
  const page = engine.page(session.db, { q: 'heliostat', section, contentTag: table.contentTag(now), page: 1, limit: 50 }, table.exposure(now, section));
  const slugOf = new Map(session.db.$client.prepare<[], [number, string]>('SELECT id, slug FROM articles').raw().all());
  return { slugs: page.ids.map((id) => slugOf.get(id)!), total: page.total };
}

describe('ranking of a match set larger than SEARCH_RANK_ALL_MAX', () => {
  it('builds a corpus whose ids grow with recency, but for the republished article', () => {
    const ids = new Map(store.session().db.$client.prepare<[], [string, number]>('SELECT slug, id FROM articles').raw().all());
    const order = articles.map((a) => ids.get(a.slug)!);
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  for (const [scoring, commonMin] of [
    ['scored by the index (bm25)', 1_000],
    ['common words scored from title and excerpt', 1],
  ] as const) {
    it(`titled matches first; in each part the newest window by score, then the rest newest first (${scoring}, in a section)`, () => {
      expect(ranked(commonMin, 'energy')).toEqual({ slugs: EXPECTED, total: EXPECTED.length });
    });

    it(`the same rule over every section, the total exact (${scoring})`, () => {
      expect(ranked(commonMin, undefined)).toEqual({ slugs: EXPECTED_ALL, total: EXPECTED_ALL.length });
    });
  }

  it('scores the titles as they are after a sync changed them (the heads read for scoring follow the snapshot)', () => {
    const path = dir.path('changing.db');
    buildSnapshot(path, { sections, articles, now });
    const changing = new SnapshotStore(path, 5_000, createLogger({ level: 'silent' }), openReader);
    try {
      expect(ranked(1, 'energy', changing).slugs).toEqual(EXPECTED);
      // t-1 gets the exact title, t-2 a long one: the window's order turns.
      const retitled = articles.map((a) =>
        a.slug === 't-1' ? { ...a, title: 'Heliostat' } : a.slug === 't-2' ? { ...a, title: 'Heliostat makers report another quarter of growth in orders' } : a,
      );
      const writer = openWriter(path, { busyTimeoutMs: 5_000 });
      try {
        writeSnapshot(writer, { sections, articles: retitled, now });
      } finally {
        writer.$client.close();
      }
      expect(ranked(1, 'energy', changing).slugs).toEqual(['t-1', 't-2', ...EXPECTED.slice(2)]);
    } finally {
      changing.close();
    }
  });

  it('pages past the ids a thread keeps of a ranking are ranked again, the same as with all of them kept', () => {
    const session = store.session();
    const table = new SnapshotViews().table(session, 'en');
    const slugOf = new Map(session.db.$client.prepare<[], [number, string]>('SELECT id, slug FROM articles').raw().all());
    // Keeps 4 ids of each ranking: pages of 3 cross that on the second page.
    const engine = new RankedSearch({ cacheBytes: 1 << 20, rankAllMax: 12, commonMin: 1, termBytes: 1 << 20, keptIds: 4 });
    const page = (q: string, n: number) => {
      const p = engine.page(session.db, { q, section: undefined, contentTag: table.contentTag(now), page: n, limit: 3 }, table.exposure(now, undefined));
      return { slugs: p.ids.map((id) => slugOf.get(id)!), total: p.total };
    };
    const pages = [1, 2, 3, 4, 5, 6].map((n) => page('heliostat', n));
    expect(pages.flatMap((p) => p.slugs)).toEqual(EXPECTED_ALL);
    expect(pages.every((p) => p.total === EXPECTED_ALL.length)).toBe(true);
    // A query of fewer matches ranks into the same scratch space: what was kept of the first stays intact.
    expect(page('visitors', 1).total).toBe(3);
    expect([1, 2, 3, 4, 5, 6].flatMap((n) => page('heliostat', n).slugs)).toEqual(EXPECTED_ALL);
    expect(page('heliostat', 7)).toEqual({ slugs: [], total: EXPECTED_ALL.length });
  });
});
