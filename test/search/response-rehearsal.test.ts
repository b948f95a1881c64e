import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../src/content/catalog.js';
import { SnapshotStore } from '../../src/db/snapshot/snapshot-store.js';
import { openReader } from '../../src/db/sqlite/connection.js';
import { rehearseSearchResponses } from '../../src/http/warm.js';
import { memoryLogger } from '../support/api.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';

/*
 * The search responses the API builds and drops before its port opens (src/http/routes/
 * content.ts): page after page of each locale's newest articles, for words of the newest
 * title and for a query of both locales' words, so that V8 has optimized the highlighting
 * code before the first partner's search.
 */

const NOW = Date.parse('2026-11-01T12:00:00Z');
const minutesAgo = (n: number) => new Date(NOW - n * 60_000).toISOString().replace('.000Z', 'Z');
const dir = tempDir('response-rehearsal-');
const dbPath = dir.path('snapshot.db');
let store: SnapshotStore;

beforeAll(() => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber', name: 'Fiber' }), { ...rawSection({ slug: 'fiber', name: '光纤' }), locale: 'zh' as const }],
    articles: [
      ...Array.from({ length: 25 }, (_, i) => rawArticle({ slug: `en-${i}`, title: `Cladding report ${i}`, section_slug: 'fiber', published_at: minutesAgo(i + 1) })),
      ...Array.from({ length: 5 }, (_, i) =>
        rawArticle({ locale: 'zh', slug: `zh-${i}`, title: `光纤激光器报告 ${i}`, body_markdown: '光纤激光器的最新进展。', section_slug: 'fiber', published_at: minutesAgo(i + 1) }),
      ),
    ],
    now: NOW,
  });
  store = new SnapshotStore(dbPath, 2_000, memoryLogger('silent').logger, openReader);
});

afterAll(() => {
  store?.close();
  dir.cleanup();
});

describe('search responses rehearsed before the port opens', () => {
  it('highlights page after page of both locales, for each locale’s words and for both together', () => {
    // Three rounds: en pages of 20, 5 and 0 hits, zh 5, 0 and 0; each twice (its own words, both locales' words).
    expect(rehearseSearchResponses(store, new Catalog(), NOW, 3)).toBe(2 * (20 + 5) + 2 * 5);
  });

  it('rehearses nothing, quietly, when there is no snapshot yet', () => {
    const missing = new SnapshotStore(dir.path('missing.db'), 2_000, memoryLogger('silent').logger, openReader);
    try {
      expect(rehearseSearchResponses(missing, new Catalog(), NOW, 3)).toBe(0);
    } finally {
      missing.close();
    }
  });
});
