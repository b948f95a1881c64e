import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWriter, type Db } from '../../src/db/sqlite/connection.js';
import { activeSections, exposedArticleBySlug } from '../../src/db/snapshot/content.js';
import { exposedFrom, isExposed, meilisearchExposureFilter, type ExposureRow } from '../../src/db/snapshot/exposure.js';
import { recordFeedChanges } from '../../src/db/snapshot/feed-write.js';
import { searchDocumentsAfter } from '../../src/db/snapshot/search-documents.js';
import { formatUtcSeconds } from '../../src/lib/time.js';
import { toMeiliDocument } from '../../src/search/meilisearch/documents.js';
import { evaluate, parseFilter } from '../fakes/meilisearch/search/filter.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';

/*
 * One exposure rule (src/db/snapshot/exposure.ts), applied in three places that must agree on
 * every combination of its conditions: the API's SQL (content.ts), the change feed's writer
 * (feed-write.ts) and Meilisearch (what is indexed, and the filter, evaluated by the fake
 * Meilisearch's filter engine on the documents the indexer would send). The snapshot is a real
 * file written by the worker's path; the combinations a sync never writes (a draft, no
 * publication time, a section that does not exist) are then set in SQL, as an old worker or a
 * manual fix could.
 */

const NOW = Date.UTC(2026, 10, 1, 12, 0, 0);
const PAST = formatUtcSeconds(NOW - 3_600_000);
const FUTURE = formatUtcSeconds(NOW + 3_600_000);
const dir = tempDir('exposure-rule-');
let db: Db;

const STATUSES = ['published', 'draft'] as const;
const TIMES = { past: PAST, future: FUTURE, none: null } as const;
const SECTIONS = { active: 'on', inactive: 'off', missing: 'nowhere' } as const;
const cases = STATUSES.flatMap((status) =>
  Object.entries(TIMES).flatMap(([time, publishedAt]) =>
    Object.entries(SECTIONS).map(([section, sectionSlug]) => ({ slug: `${status}-${time}-${section}`, status, publishedAt, sectionSlug })),
  ),
);

beforeAll(() => {
  const path = dir.path('snapshot.db');
  buildSnapshot(path, {
    sections: [rawSection({ slug: 'on', name: 'On' }), rawSection({ slug: 'off', name: 'Off', active: false })],
    articles: cases.map((c) => rawArticle({ slug: c.slug, section_slug: 'on', published_at: PAST })),
    now: NOW - 7_200_000,
  });
  db = openWriter(path, { busyTimeoutMs: 5_000 });
  const set = db.$client.prepare('UPDATE articles SET status = ?, published_at = ?, section_slug = ? WHERE locale = ? AND slug = ?');
  db.$client.transaction(() => {
    for (const c of cases) set.run(c.status, c.publishedAt, c.sectionSlug, 'en', c.slug);
    recordFeedChanges(db, 'en', 'all', NOW);
  })();
});

afterAll(() => {
  db?.$client.close();
  dir.cleanup();
});

function ruleRow(slug: string): ExposureRow {
  return db.$client
    .prepare(
      `SELECT a.status, a.published_at, s.active AS section_active
       FROM articles a LEFT JOIN sections s ON s.locale = a.locale AND s.slug = a.section_slug WHERE a.locale = 'en' AND a.slug = ?`,
    )
    .get(slug) as ExposureRow;
}

describe('the exposure rule', () => {
  it('exposes only a published article whose time has come, in an active section', () => {
    const exposed = cases.filter((c) => isExposed(ruleRow(c.slug), NOW)).map((c) => c.slug);
    expect(exposed).toEqual(['published-past-active']);
    expect(cases.filter((c) => exposedFrom(ruleRow(c.slug)) !== undefined).map((c) => c.slug)).toEqual([
      'published-past-active',
      'published-future-active',
    ]);
  });

  it("is what the API's SQL returns", () => {
    for (const c of cases) {
      const found = exposedArticleBySlug(db, 'en', c.slug, formatUtcSeconds(NOW)) !== undefined;
      expect(found, c.slug).toBe(isExposed(ruleRow(c.slug), NOW));
    }
  });

  it('is what the change feed says now, and what it has scheduled', () => {
    const rows = db.$client.prepare(`SELECT effective_ms, kind FROM feed_entries WHERE locale = 'en' AND slug = ? ORDER BY effective_ms, seq`);
    for (const c of cases) {
      const feed = rows.all(c.slug) as Array<{ effective_ms: number; kind: string }>;
      const inEffect = feed.filter((r) => r.effective_ms <= NOW).at(-1);
      expect(inEffect?.kind === 'upsert', `${c.slug} now`).toBe(isExposed(ruleRow(c.slug), NOW));
      const from = exposedFrom(ruleRow(c.slug));
      const scheduled = feed.filter((r) => r.effective_ms > NOW).map((r) => [r.effective_ms, r.kind]);
      expect(scheduled, `${c.slug} later`).toEqual(from !== undefined && from > NOW ? [[from, 'upsert']] : []);
    }
  });

  it('is what a Meilisearch search may find: what is indexed, through the filter every search sends', () => {
    const filter = parseFilter(meilisearchExposureFilter(activeSections(db, 'en').map((s) => s.slug), NOW))!;
    const indexed = new Map(searchDocumentsAfter(db, 'en', 0, 1_000).map((row) => [row.slug, toMeiliDocument(row)]));
    for (const c of cases) {
      const doc = indexed.get(c.slug);
      const found = doc !== undefined && evaluate(filter, doc as unknown as Record<string, unknown>);
      expect(found, c.slug).toBe(isExposed(ruleRow(c.slug), NOW));
    }
  });
});
