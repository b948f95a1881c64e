import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocaleView } from '../../../src/content/locale-view.js';
import { consistentRead, snapshotStates } from '../../../src/db/snapshot/content.js';
import { LocaleExposure } from '../../../src/db/snapshot/locale-exposure.js';
import { openWriter, type Db } from '../../../src/db/sqlite/connection.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';

const NOW = Date.UTC(2026, 10, 1, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const HOUR = 3_600_000;

const tmp = tempDir();
let db: Db;
// id of each article, by slug.
const idOf = new Map<string, number>();

beforeAll(() => {
  const path = tmp.path('snapshot.db');
  buildSnapshot(path, {
    sections: [rawSection({ slug: 'lasers', position: 1 }), rawSection({ slug: 'optics', position: 2 }), rawSection({ slug: 'closed', position: 3, active: false })],
    articles: [
      rawArticle({ slug: 'old', section_slug: 'lasers', published_at: iso(NOW - 3 * HOUR) }),
      // Two articles published at the same instant: ties go by slug.
      rawArticle({ slug: 'tie-b', section_slug: 'optics', published_at: iso(NOW - 2 * HOUR) }),
      rawArticle({ slug: 'tie-a', section_slug: 'lasers', published_at: iso(NOW - 2 * HOUR) }),
      rawArticle({ slug: 'scheduled', section_slug: 'optics', published_at: iso(NOW + HOUR) }),
      rawArticle({ slug: 'in-closed', section_slug: 'closed', published_at: iso(NOW - HOUR) }),
    ],
    locales: ['en'],
    now: NOW - 4 * HOUR,
  });
  db = openWriter(path, { busyTimeoutMs: 5_000 });
  for (const [id, slug] of db.$client.prepare('SELECT id, slug FROM articles').raw().all() as [number, string][]) idOf.set(slug, id);
});

afterAll(() => {
  db?.$client.close();
  tmp.cleanup();
});

const build = () => consistentRead(db, () => LocaleExposure.build(db, 'en', 1));
/** The slugs `exposure` ranks, in rank order. */
function ranked(exposure: { rank(id: number): number }): string[] {
  return [...idOf].filter(([, id]) => exposure.rank(id) >= 0).sort((a, b) => exposure.rank(a[1]) - exposure.rank(b[1])).map(([slug]) => slug);
}

describe('LocaleExposure (the visibility index of the API thread and the search threads)', () => {
  it('ranks the exposed articles in partner order, newest first with ties by slug, leaving out inactive sections', () => {
    expect(ranked(build().exposure(NOW, undefined))).toEqual(['tie-a', 'tie-b', 'old']);
  });

  it('lets a scheduled article appear by itself when its time comes, and changes the content tag then', () => {
    const index = build();
    expect(index.exposure(NOW, undefined).rank(idOf.get('scheduled')!)).toBe(-1);
    expect(ranked(index.exposure(NOW + HOUR, undefined))).toEqual(['scheduled', 'tie-a', 'tie-b', 'old']);
    expect(index.contentTag(NOW)).toBe(index.contentTag(NOW + HOUR - 1));
    expect(index.contentTag(NOW + HOUR)).not.toBe(index.contentTag(NOW));
  });

  it('filters by section, and an unknown or inactive section matches nothing', () => {
    const index = build();
    expect(ranked(index.exposure(NOW + HOUR, 'optics'))).toEqual(['scheduled', 'tie-b']);
    expect(ranked(index.exposure(NOW, 'lasers'))).toEqual(['tie-a', 'old']);
    expect(ranked(index.exposure(NOW, 'closed'))).toEqual([]);
    expect(ranked(index.exposure(NOW, 'nowhere'))).toEqual([]);
  });

  it('gives each index built its own content tag, so a rebuilt view never reuses cached answers', () => {
    expect(build().contentTag(NOW)).not.toBe(build().contentTag(NOW));
  });

  it('is what the API thread’s LocaleView answers from: the same ranks and partner order', () => {
    const view = consistentRead(db, () => LocaleView.build(db, { ...snapshotStates(db).find((s) => s.locale === 'en')!, locale: 'en' }));
    const index = build();
    for (const now of [NOW, NOW + HOUR]) {
      for (const section of [undefined, 'lasers', 'optics', 'closed']) {
        const fromView = view.exposure(now, section);
        const fromIndex = index.exposure(now, section);
        for (const id of idOf.values()) expect(fromView.rank(id)).toBe(fromIndex.rank(id));
        expect(fromView.ordered).toEqual(fromIndex.ordered);
      }
    }
    expect(Array.from(view.all.ids)).toEqual(Array.from(index.all.ids));
    expect(view.section('optics').page(NOW + HOUR, 1, 10).ids).toEqual([idOf.get('scheduled'), idOf.get('tie-b')]);
  });
});
