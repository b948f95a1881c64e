import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchResultsSchema } from '../../../src/http/contract/response-schemas.js';
import { openWriter } from '../../../src/db/sqlite/connection.js';
import { addKey, testClock, type TestApi } from '../../support/api.js';
import { isoWithOffset, rawArticle, rawSection } from '../../support/cms-fixtures.js';
import type { EngineSetup } from '../../support/meili-fixture.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { deepStrict, isoPlus, MINUTE } from '../../support/contract-helpers.js';

export type { EngineSetup } from '../../support/meili-fixture.js';

/*
 * What partners rely on from /api/v1/search, whichever engine answers it. The same suite runs
 * against the embedded SQLite engine, Meilisearch on the fake, and a real Meilisearch (when
 * MEILI_HOST is set), so the engines cannot drift apart. Only behaviour both engines must
 * share is asserted here; engine-specific details (typo tolerance, what is sent to
 * Meilisearch) have their own suites.
 *
 * The fixture's words are chosen so that no two are within a typo of each other and none
 * starts like another query word: Meilisearch's typo tolerance must not widen a result set
 * that SQLite would not widen.
 */

const NOW = '2026-11-01T12:00:00Z';
const SCHEDULED_AT = isoPlus(NOW, 30 * MINUTE);
const FAR_FUTURE = '2030-01-01T00:00:00Z';
const BULK = 1200;

const ago = (minutes: number) => isoPlus(NOW, -minutes * MINUTE);
const text = (body: string) => ({ excerpt: 'Short note.', body_markdown: body, author: 'Desk' });

// Section names are searchable too: none contains a word searched for below.
const SECTIONS = [
  rawSection({ slug: 'fiber', name: 'Alpha', position: 1 }),
  rawSection({ slug: 'ultrafast', name: 'Beta', position: 2 }),
  rawSection({ slug: 'bulk', name: 'Gamma', position: 3 }),
  rawSection({ slug: 'retired', name: 'Omega', position: 4, active: false }),
  { ...rawSection({ slug: 'fiber', name: '资讯', position: 1 }), locale: 'zh' as const },
];

const ARTICLES = [
  // Relevance: the word in the title beats it in the body only, although the body hit is newer.
  rawArticle({ slug: 'title-hit', title: 'Galvanometer scanners reach new speeds', section_slug: 'fiber', published_at: ago(300), ...text('A review of recent developments in beam steering hardware.') }),
  rawArticle({ slug: 'body-hit', title: 'Weekly photonics roundup', section_slug: 'fiber', published_at: ago(10), ...text('A review of recent developments, with a galvanometer upgrade.') }),
  // Ties: identical text, so identical relevance; the newer comes first.
  rawArticle({ slug: 'tie-old', title: 'Zirconia ceramics machined cleanly', section_slug: 'ultrafast', published_at: ago(200), ...text('Same words.') }),
  rawArticle({ slug: 'tie-new', title: 'Zirconia ceramics machined cleanly', section_slug: 'ultrafast', published_at: ago(100), ...text('Same words.') }),
  // Every word required; prefixes.
  rawArticle({ slug: 'laser-cutting', title: 'Laser cutting of thick steel', section_slug: 'fiber', published_at: ago(20), ...text('Nitrogen assist gas.') }),
  rawArticle({ slug: 'laser-marking', title: 'Laser marking of medical parts', section_slug: 'ultrafast', published_at: ago(21), ...text('Traceability rules.') }),
  rawArticle({ slug: 'plasma-cutting', title: 'Plasma cutting holds on', section_slug: 'fiber', published_at: ago(22), ...text('Older technology.') }),
  // Exposure: only quasar-live may be found before SCHEDULED_AT; the others also say "cladding".
  rawArticle({ slug: 'quasar-live', title: 'Quasar live story', section_slug: 'fiber', published_at: ago(30), ...text('Visible.') }),
  rawArticle({ slug: 'quasar-retired', title: 'Quasar cladding retired section', section_slug: 'retired', published_at: ago(32), ...text('Hidden.') }),
  rawArticle({ slug: 'quasar-nosection', title: 'Quasar cladding without section', section_slug: null, published_at: ago(33), ...text('Hidden.') }),
  rawArticle({ slug: 'quasar-ghost', title: 'Quasar cladding unknown section', section_slug: 'ghost', published_at: ago(34), ...text('Hidden.') }),
  rawArticle({ slug: 'quasar-scheduled', title: 'Quasar cladding scheduled', section_slug: 'fiber', published_at: SCHEDULED_AT, ...text('Pending.') }),
  // Stale index entries: indexed, then changed in the snapshot by hand (see beforeAll).
  rawArticle({ slug: 'xylo-kept-1', title: 'Xylophone acoustics one', section_slug: 'fiber', published_at: ago(50), ...text('Kept.') }),
  rawArticle({ slug: 'xylo-kept-2', title: 'Xylophone acoustics two', section_slug: 'fiber', published_at: ago(51), ...text('Kept.') }),
  rawArticle({ slug: 'xylo-deleted', title: 'Xylophone acoustics three', section_slug: 'fiber', published_at: ago(45), ...text('Gone.') }),
  rawArticle({ slug: 'xylo-unpublished', title: 'Xylophone acoustics four', section_slug: 'fiber', published_at: ago(46), ...text('Gone.') }),
  rawArticle({ slug: 'xylo-rescheduled', title: 'Xylophone acoustics five', section_slug: 'fiber', published_at: ago(47), ...text('Gone.') }),
  // Chinese; and the Latin word "Laser" in a zh article, to show the locales stay apart.
  rawArticle({ locale: 'zh', slug: 'zh-fiber-laser', title: '光纤激光器出口增长', section_slug: 'fiber', published_at: ago(1), ...text('出口数据。') }),
  rawArticle({ locale: 'zh', slug: 'zh-laser-cutting', title: '激光切割设备销量上升', section_slug: 'fiber', published_at: ago(2), ...text('销量数据。') }),
  rawArticle({ locale: 'zh', slug: 'zh-femtosecond', title: '飞秒激光加工精度提升', section_slug: 'fiber', published_at: ago(3), ...text('精度数据。') }),
  rawArticle({ locale: 'zh', slug: 'zh-wafer', title: '半导体晶圆产能扩张', section_slug: 'fiber', published_at: ago(4), ...text('产能数据。') }),
  rawArticle({ locale: 'zh', slug: 'zh-latin', title: 'Laser 展会开幕', section_slug: 'fiber', published_at: ago(5), ...text('展会。') }),
  // Letters and digits written against Chinese characters (Meilisearch groups digits with the
  // Chinese before them; before 1.25 it cut 2024 into digits).
  rawArticle({ locale: 'zh', slug: 'zh-5g', title: '采用5G技术的激光器', section_slug: 'fiber', published_at: ago(6), ...text('通信。') }),
  rawArticle({ locale: 'zh', slug: 'zh-3d', title: '金属3D打印设备', section_slug: 'fiber', published_at: ago(7), ...text('增材制造。') }),
  rawArticle({ locale: 'zh', slug: 'zh-2024', title: '发布于2024年的报告', section_slug: 'fiber', published_at: ago(8), ...text('年度。') }),
  rawArticle({ locale: 'zh', slug: 'zh-lidar', title: '激光雷达系统', section_slug: 'fiber', published_at: ago(9), ...text('汽车。') }),
  // A body far past Meilisearch's 65,536 positions per attribute (a sentence is 9 of them):
  // its last word must still be found.
  rawArticle({ slug: 'long-body', title: 'Annual compendium', section_slug: 'fiber', published_at: ago(60), ...text(`${Array.from({ length: 12_000 }, () => 'Padding filler.').join(' ')} Zeppelin.`) }),
  // Highlights: HTML and entities in the stored text, the word deep in a long body.
  rawArticle({
    slug: 'yttrium-html',
    title: 'Yttrium <b>garnet</b> & "rods"',
    section_slug: 'fiber',
    published_at: ago(60),
    ...text(`${'Filler sentence about crystals. '.repeat(12)}<script>alert("x")</script> The yttrium rods & the 'hosts' grow slowly. ${'More filler here. '.repeat(12)}`),
  }),
];

// Published bounds and order (issue 36): three articles published at the same instant (ties by
// slug), one older, one newer; the word appears nowhere else.
const QUOKKA_AT = ago(400);
const QUOKKA = [
  rawArticle({ slug: 'quokka-b', title: 'Quokka optics', section_slug: 'fiber', published_at: QUOKKA_AT, ...text('Tied.') }),
  rawArticle({ slug: 'quokka-new', title: 'Quokka optics', section_slug: 'fiber', published_at: isoPlus(QUOKKA_AT, 1000), ...text('Newer by a second.') }),
  rawArticle({ slug: 'quokka-c', title: 'Quokka optics', section_slug: 'fiber', published_at: QUOKKA_AT, ...text('Tied.') }),
  rawArticle({ slug: 'quokka-old', title: 'Quokka optics', section_slug: 'fiber', published_at: isoPlus(QUOKKA_AT, -1000), ...text('Older by a second.') }),
  rawArticle({ slug: 'quokka-a', title: 'Quokka optics', section_slug: 'fiber', published_at: QUOKKA_AT, ...text('Tied.') }),
];

/** An instant written with a +08:00 offset, as the zh desk writes them, sent percent-encoded. */
const plus8 = (iso: string) => isoWithOffset(Date.parse(iso), 8 * 60);

// More than 1000 hits, all equally relevant (same words), one minute apart: bulk-0000 newest.
const BULK_ARTICLES = Array.from({ length: BULK }, (_, i) =>
  rawArticle({
    id: `bulk-${i}`,
    slug: `bulk-${String(i).padStart(4, '0')}`,
    title: 'Cladding report',
    section_slug: 'bulk',
    published_at: ago(1440 + i),
    ...text('Weekly numbers.'),
  }),
);

type Hit = { slug: string; locale: string; published_at: string };
type Results = { data: Hit[]; meta: Record<string, unknown> };

const strict = deepStrict(searchResultsSchema);
const slugs = (r: Results) => r.data.map((a) => a.slug);
const sorted = (r: Results) => slugs(r).sort();

/**
 * The search contract, for one engine. `setup` is called once, before anything else; the suite
 * builds its own snapshot, has the engine index it, then talks to the API over HTTP only.
 */
export function searchContract(name: string, setup: () => EngineSetup | Promise<EngineSetup>): void {
  describe(`search contract: ${name}`, () => {
    // Made in beforeAll: a skipped suite (no MEILI_HOST) must leave nothing behind.
    let dir: ReturnType<typeof tempDir> | undefined;
    let dbPath = '';
    const clock = testClock(NOW);
    let engine: EngineSetup | undefined;
    let api: TestApi | undefined;
    let key = '';

    beforeAll(async () => {
      dir = tempDir('search-contract-');
      dbPath = dir.path('snapshot.db');
      engine = await setup();
      buildSnapshot(dbPath, { sections: SECTIONS, articles: [...ARTICLES, ...QUOKKA, ...BULK_ARTICLES], now: Date.parse(NOW) });
      await engine.index(dbPath);
      // After indexing, the snapshot changes without the index following: an index that missed
      // an update (a failed sync) still has these entries, exposed as they were.
      const db = openWriter(dbPath, { busyTimeoutMs: 5_000 });
      let staleIds: number[] = [];
      try {
        staleIds = db.$client
          .prepare(`SELECT id FROM articles WHERE slug IN ('xylo-deleted', 'xylo-unpublished', 'xylo-rescheduled')`)
          .all()
          .map((row) => (row as { id: number }).id);
        db.$client.prepare(`DELETE FROM articles WHERE slug = 'xylo-deleted'`).run();
        db.$client.prepare(`UPDATE articles SET status = 'archived' WHERE slug = 'xylo-unpublished'`).run();
        db.$client.prepare(`UPDATE articles SET published_at = ? WHERE slug = 'xylo-rescheduled'`).run(FAR_FUTURE);
      } finally {
        db.$client.close();
      }
      await engine.missedUpdate?.(dbPath, 'en', staleIds);
      key = addKey(dbPath).key;
      api = await engine.startApi(dbPath, clock);
    });

    afterAll(async () => {
      try {
        await api?.close();
        await engine?.cleanup();
      } finally {
        dir?.cleanup();
      }
    });

    async function search(query: Record<string, string | number>): Promise<Results> {
      const res = await api!.request.get('/api/v1/search').query(query).set('X-API-Key', key);
      expect(res.status, `${JSON.stringify(query)}: ${res.text}`).toBe(200);
      strict.parse(res.body);
      return res.body as Results;
    }

    describe('matching', () => {
      it('finds exactly the articles that contain a single word', async () => {
        expect(sorted(await search({ q: 'laser' }))).toEqual(['laser-cutting', 'laser-marking']);
        expect(sorted(await search({ q: 'cutting' }))).toEqual(['laser-cutting', 'plasma-cutting']);
        expect(sorted(await search({ q: 'galvanometer' }))).toEqual(['body-hit', 'title-hit']);
        expect((await search({ q: 'nitrogen' })).data.map((a) => a.slug)).toEqual(['laser-cutting']);
      });

      it('requires every word of the query', async () => {
        expect(slugs(await search({ q: 'laser cutting' }))).toEqual(['laser-cutting']);
        expect(slugs(await search({ q: 'plasma cutting' }))).toEqual(['plasma-cutting']);
        const none = await search({ q: 'laser plasma' });
        expect(none.data).toEqual([]);
        expect(none.meta).toMatchObject({ total: 0, pages: 0 });
      });

      it('matches the last word of the query by its beginning', async () => {
        expect(sorted(await search({ q: 'las' }))).toEqual(['laser-cutting', 'laser-marking']);
        expect(sorted(await search({ q: 'galv' }))).toEqual(['body-hit', 'title-hit']);
        expect(slugs(await search({ q: 'laser cutt' }))).toEqual(['laser-cutting']);
        // A prefix, not a substring.
        expect((await search({ q: 'aser' })).data).toEqual([]);
      });

      it('ignores case', async () => {
        expect(slugs(await search({ q: 'GALVANOMETER' }))).toEqual(slugs(await search({ q: 'galvanometer' })));
        expect(sorted(await search({ q: 'LaSeR' }))).toEqual(['laser-cutting', 'laser-marking']);
      });
    });

    describe('ranking', () => {
      it('ranks a match in the title above a match in the body only, even a newer one', async () => {
        const res = await search({ q: 'galvanometer' });
        expect(slugs(res)).toEqual(['title-hit', 'body-hit']);
        expect(res.meta).toMatchObject({ total: 2, pages: 1 });
      });

      it('breaks ties by newest published_at', async () => {
        expect(slugs(await search({ q: 'zirconia ceramics' }))).toEqual(['tie-new', 'tie-old']);
        expect(slugs(await search({ q: 'cladding', limit: 3 }))).toEqual(['bulk-0000', 'bulk-0001', 'bulk-0002']);
      });
    });

    describe('sections', () => {
      it('keeps only the hits of the section asked for', async () => {
        expect(slugs(await search({ q: 'laser', section: 'fiber' }))).toEqual(['laser-cutting']);
        expect(slugs(await search({ q: 'laser', section: 'ultrafast' }))).toEqual(['laser-marking']);
        expect((await search({ q: 'cladding', section: 'fiber' })).meta).toMatchObject({ total: 0, pages: 0 });
        expect((await search({ q: 'cladding', section: 'bulk', limit: 1 })).meta).toMatchObject({ total: BULK });
      });

      it('answers an empty section= with nothing, without changing the answer when section is absent', async () => {
        const empty = await search({ q: 'laser', section: '' });
        expect(empty.data).toEqual([]);
        expect(empty.meta).toMatchObject({ total: 0, pages: 0 });
        expect(sorted(await search({ q: 'laser' }))).toEqual(['laser-cutting', 'laser-marking']);
        expect((await search({ q: 'laser', section: '' })).meta).toMatchObject({ total: 0 });
      });

      it('answers an unknown or inactive section with an empty result, not an error', async () => {
        for (const section of ['retired', 'ghost', 'nope']) {
          for (const q of ['quasar', 'cladding']) {
            const res = await search({ q, section });
            expect(res.data, `${q} in ${section}`).toEqual([]);
            expect(res.meta).toMatchObject({ total: 0, pages: 0 });
          }
        }
      });
    });

    describe('totals and pages past 1000 hits', () => {
      it('counts every hit exactly', async () => {
        const res = await search({ q: 'cladding', limit: 50 });
        expect(res.meta).toEqual({ page: 1, limit: 50, total: BULK, pages: 24, locale: 'en', q: 'cladding', words: ['cladding'] });
        const last = await search({ q: 'cladding', limit: 7, page: 172 });
        expect(last.meta).toMatchObject({ page: 172, total: BULK, pages: 172 });
        expect(slugs(last)).toEqual(['bulk-1197', 'bulk-1198', 'bulk-1199']);
      });

      it('gives pages that do not overlap and together hold every hit once, newest first', async () => {
        const seen: Hit[] = [];
        for (let page = 1; page <= 24; page++) {
          const res = await search({ q: 'cladding', limit: 50, page });
          expect(res.data, `page ${page}`).toHaveLength(50);
          expect(res.meta).toMatchObject({ page, total: BULK, pages: 24 });
          seen.push(...res.data);
        }
        const unique = new Set(seen.map((a) => a.slug));
        expect(unique.size).toBe(BULK);
        expect(seen.map((a) => a.slug)).toEqual(BULK_ARTICLES.map((a) => a.slug));
        const times = seen.map((a) => a.published_at);
        expect(times).toEqual([...times].sort().reverse());
      });

      it('answers a page past the last one with no data and the true total', async () => {
        for (const page of [25, 1000]) {
          const res = await search({ q: 'cladding', limit: 50, page });
          expect(res.data).toEqual([]);
          expect(res.meta).toEqual({ page, limit: 50, total: BULK, pages: 24, locale: 'en', q: 'cladding', words: ['cladding'] });
        }
        const small = await search({ q: 'laser', page: 2 });
        expect(small.data).toEqual([]);
        expect(small.meta).toMatchObject({ page: 2, total: 2, pages: 1 });
      });
    });

    describe('exposure', () => {
      it('returns only exposed articles, and the total counts only them', async () => {
        const res = await search({ q: 'quasar' });
        expect(slugs(res)).toEqual(['quasar-live']);
        expect(res.meta).toMatchObject({ total: 1, pages: 1 });
        // The hidden ones also say "cladding": they do not inflate the bulk total.
        expect((await search({ q: 'cladding', limit: 1 })).meta).toMatchObject({ total: BULK, pages: BULK });
        expect((await search({ q: 'quasar cladding' })).meta).toMatchObject({ total: 0, pages: 0 });
      });

      it('finds a scheduled article once the clock passes its time, never one of an inactive section', async () => {
        clock.set(SCHEDULED_AT);
        try {
          const res = await search({ q: 'quasar' });
          expect(sorted(res)).toEqual(['quasar-live', 'quasar-scheduled']);
          expect(res.meta).toMatchObject({ total: 2, pages: 1 });
          expect((await search({ q: 'cladding', limit: 1 })).meta).toMatchObject({ total: BULK + 1 });
          expect(slugs(await search({ q: 'quasar cladding' }))).toEqual(['quasar-scheduled']);
        } finally {
          clock.set(NOW);
        }
        expect(slugs(await search({ q: 'quasar' }))).toEqual(['quasar-live']);
      });

      it('drops a hit the index still has but the snapshot no longer exposes, and does not count it', async () => {
        const res = await search({ q: 'xylophone' });
        expect(sorted(res)).toEqual(['xylo-kept-1', 'xylo-kept-2']);
        expect(res.meta).toMatchObject({ total: 2, pages: 1 });
        const section = await search({ q: 'xylophone acoustics', section: 'fiber' });
        expect(sorted(section)).toEqual(['xylo-kept-1', 'xylo-kept-2']);
        expect(section.meta).toMatchObject({ total: 2, pages: 1 });
      });

      it('keeps every page full and the total honest when hits the snapshot no longer exposes rank first', async () => {
        // The stale entries are newer than the kept ones: with equal relevance they rank first.
        const pages = [];
        for (let page = 1; page <= 3; page++) {
          const res = await search({ q: 'xylophone', limit: 1, page });
          pages.push({ page, slugs: slugs(res), total: res.meta.total, pages: res.meta.pages });
        }
        expect(pages).toEqual([
          { page: 1, slugs: ['xylo-kept-1'], total: 2, pages: 2 },
          { page: 2, slugs: ['xylo-kept-2'], total: 2, pages: 2 },
          { page: 3, slugs: [], total: 2, pages: 2 },
        ]);
      });
    });

    describe('Chinese and locales', () => {
      it('finds 激光 in 光纤激光器, 激光切割 and 飞秒激光', async () => {
        const res = await search({ q: '激光', locale: 'zh' });
        expect(sorted(res)).toEqual(['zh-5g', 'zh-femtosecond', 'zh-fiber-laser', 'zh-laser-cutting', 'zh-lidar']);
        expect(res.meta).toEqual({ page: 1, limit: 20, total: 5, pages: 1, locale: 'zh', q: '激光', words: ['激光'] });
        expect(slugs(await search({ q: '飞秒', locale: 'zh' }))).toEqual(['zh-femtosecond']);
        expect((await search({ q: '量子', locale: 'zh' })).data).toEqual([]);
      });

      it('finds 2- and 3-character Chinese words: 激光器, 雷达, 激光设备', async () => {
        expect(sorted(await search({ q: '激光器', locale: 'zh' }))).toEqual(['zh-5g', 'zh-fiber-laser']);
        expect(slugs(await search({ q: '雷达', locale: 'zh' }))).toEqual(['zh-lidar']);
        expect(slugs(await search({ q: '激光雷达', locale: 'zh' }))).toEqual(['zh-lidar']);
        expect(slugs(await search({ q: '打印设备', locale: 'zh' }))).toEqual(['zh-3d']);
      });

      it('finds 5G, 3D and 2024 written against Chinese characters', async () => {
        expect(slugs(await search({ q: '5G', locale: 'zh' }))).toEqual(['zh-5g']);
        expect(slugs(await search({ q: '3d', locale: 'zh' }))).toEqual(['zh-3d']);
        expect(slugs(await search({ q: '2024', locale: 'zh' }))).toEqual(['zh-2024']);
        expect(slugs(await search({ q: '2024年', locale: 'zh' }))).toEqual(['zh-2024']);
        expect(slugs(await search({ q: '5G激光器', locale: 'zh' }))).toEqual(['zh-5g']);
      });

      it('searches the requested locale only', async () => {
        const zh = await search({ q: 'laser', locale: 'zh' });
        expect(slugs(zh)).toEqual(['zh-latin']);
        expect(zh.data.every((a) => a.locale === 'zh')).toBe(true);
        const en = await search({ q: 'laser' });
        expect(sorted(en)).toEqual(['laser-cutting', 'laser-marking']);
        expect(en.data.every((a) => a.locale === 'en')).toBe(true);
        expect((await search({ q: '激光' })).meta).toMatchObject({ total: 0 });
        expect((await search({ q: 'galvanometer', locale: 'zh' })).meta).toMatchObject({ total: 0 });
      });
    });

    describe('long bodies', () => {
      it('finds the last word of a body past 65,536 positions', async () => {
        expect(slugs(await search({ q: 'zeppelin' }))).toEqual(['long-body']);
      });
    });

    describe('operators and queries without words', () => {
      it('answers a query with no word with nothing, never with every article', async () => {
        for (const q of ['--', '!!', '""', '-- !!', '* *', '()']) {
          const res = await search({ q });
          expect(res.data, q).toEqual([]);
          expect(res.meta, q).toMatchObject({ total: 0, pages: 0, q });
        }
      });

      it('reads -word as the plain word, never as an exclusion', async () => {
        expect(sorted(await search({ q: '-laser' }))).toEqual(['laser-cutting', 'laser-marking']);
        expect(slugs(await search({ q: 'laser -cutting' }))).toEqual(['laser-cutting']);
        expect(slugs(await search({ q: '-plasma cutting' }))).toEqual(['plasma-cutting']);
      });

      it('reads "quoted words" as the plain words, in any order', async () => {
        expect(slugs(await search({ q: '"laser cutting"' }))).toEqual(['laser-cutting']);
        expect(slugs(await search({ q: '"cutting laser"' }))).toEqual(['laser-cutting']);
        expect(slugs(await search({ q: '"laser cutting' }))).toEqual(['laser-cutting']);
      });

      it('ignores punctuation and operator characters around words', async () => {
        expect(sorted(await search({ q: 'laser*' }))).toEqual(['laser-cutting', 'laser-marking']);
        expect(slugs(await search({ q: '(laser) + [cutting]!' }))).toEqual(['laser-cutting']);
        expect(slugs(await search({ q: 'laser, cutting.' }))).toEqual(['laser-cutting']);
      });

      it('uses the first ten distinct words and ignores the rest', async () => {
        const ten = 'laser cutting thick steel nitrogen assist gas laser cutting thick steel nitrogen';
        // Ten distinct words at most: repeats do not count, the eleventh distinct one is ignored.
        expect(slugs(await search({ q: `${ten} of` }))).toEqual(['laser-cutting']);
        const eleven = 'laser cutting thick steel nitrogen assist gas of desk short quasar';
        expect(slugs(await search({ q: eleven }))).toEqual(['laser-cutting']);
        // Within the first ten, a word that matches nothing still empties the result.
        expect((await search({ q: 'laser cutting quasar' })).data).toEqual([]);
      });
    });

    describe('highlights (computed from the stored text: the same on every engine)', () => {
      type Marked = { text: string; html: string; matches: { start: number; length: number; word: string }[] };
      type Highlighted = Hit & { highlights?: { title: Marked; body: Marked } };
      const words = (m: Marked) => m.matches.map((x) => [...m.text].slice(x.start, x.start + x.length).join(''));

      it('marks the query words in the title and in a body excerpt around the match, escaped', async () => {
        const res = await search({ q: 'yttrium rod' });
        const hit = (res.data as Highlighted[])[0]!;
        expect(hit.slug).toBe('yttrium-html');
        const { title, body } = hit.highlights!;
        expect(title).toEqual({
          text: 'Yttrium <b>garnet</b> & "rods"',
          html: '<mark>Yttrium</mark> &lt;b&gt;garnet&lt;/b&gt; &amp; &quot;<mark>rods</mark>&quot;',
          matches: [
            { start: 0, length: 7, word: 'yttrium' },
            { start: 25, length: 4, word: 'rod' },
          ],
        });
        expect(words(body)).toEqual(['yttrium', 'rods']);
        expect(body.text).toContain("The yttrium rods & the 'hosts' grow slowly.");
        expect(body.text).not.toContain('<script');
        expect(body.text.startsWith('…') && body.text.endsWith('…')).toBe(true);
        expect(body.text.length).toBeLessThanOrEqual(202);
        expect(body.html).toContain('<mark>yttrium</mark> <mark>rods</mark> &amp; the &#39;hosts&#39;');
        expect(body.html.replaceAll('<mark>', '').replaceAll('</mark>', '')).not.toMatch(/[<>"']/);
      });

      it('marks Chinese words and prefixes, and leaves highlights out with highlight=false', async () => {
        const zh = (await search({ q: '激光', locale: 'zh' })).data as Highlighted[];
        // The whole word the index holds is marked: 激光器 in 光纤激光器出口增长.
        expect(Object.fromEntries(zh.map((hit) => [hit.slug, words(hit.highlights!.title)]))).toEqual({
          'zh-fiber-laser': ['激光器'],
          'zh-laser-cutting': ['激光'],
          'zh-femtosecond': ['激光'],
          'zh-5g': ['激光器'],
          'zh-lidar': ['激光'],
        });
        const prefix = (await search({ q: 'galv' })).data as Highlighted[];
        expect(prefix.map((h) => [h.slug, words(h.highlights!.title), words(h.highlights!.body)])).toEqual([
          ['title-hit', ['Galvanometer'], []],
          ['body-hit', [], ['galvanometer']],
        ]);
        const plain = (await search({ q: 'galv', highlight: 'false' })).data as Highlighted[];
        expect(plain.map((h) => h.slug)).toEqual(['title-hit', 'body-hit']);
        expect(plain.every((h) => h.highlights === undefined)).toBe(true);
      });
    });

    describe('meta', () => {
      it('echoes the trimmed q with page, limit, total, pages and locale', async () => {
        const res = await search({ q: '  Laser cutting  ' });
        expect(res.meta).toEqual({ page: 1, limit: 20, total: 1, pages: 1, locale: 'en', q: 'Laser cutting', words: ['laser', 'cutting'] });
        const paged = await search({ q: 'cladding', page: 3, limit: 11 });
        expect(paged.meta).toEqual({ page: 3, limit: 11, total: BULK, pages: Math.ceil(BULK / 11), locale: 'en', q: 'cladding', words: ['cladding'] });
      });
    });

    describe('published bounds and order (issue 36)', () => {
      it('orders by time with order=newest and oldest, ties by slug in both', async () => {
        expect(slugs(await search({ q: 'quokka', order: 'newest' }))).toEqual(['quokka-new', 'quokka-a', 'quokka-b', 'quokka-c', 'quokka-old']);
        expect(slugs(await search({ q: 'quokka', order: 'oldest' }))).toEqual(['quokka-old', 'quokka-a', 'quokka-b', 'quokka-c', 'quokka-new']);
        // Relevance stays the default, and finds the same five.
        expect(sorted(await search({ q: 'quokka' }))).toEqual(['quokka-a', 'quokka-b', 'quokka-c', 'quokka-new', 'quokka-old']);
      });

      it('keeps published_after inclusive and published_before exclusive at the exact instant, with any offset', async () => {
        const after = await search({ q: 'quokka', published_after: plus8(QUOKKA_AT), order: 'oldest' });
        expect(slugs(after)).toEqual(['quokka-a', 'quokka-b', 'quokka-c', 'quokka-new']);
        expect(after.meta).toMatchObject({ total: 4, pages: 1 });
        const before = await search({ q: 'quokka', published_before: plus8(QUOKKA_AT), order: 'newest' });
        expect(slugs(before)).toEqual(['quokka-old']);
        const range = await search({ q: 'quokka', published_after: QUOKKA_AT, published_before: isoPlus(QUOKKA_AT, 1000), order: 'newest' });
        expect(slugs(range)).toEqual(['quokka-a', 'quokka-b', 'quokka-c']);
        expect(range.meta).toMatchObject({ total: 3 });
      });

      it('counts exactly within the bounds, and pages through them in order', async () => {
        // bulk-i is published i minutes before ago(1440): after ago(1450) holds i = 0..10, before ago(1445) i >= 6.
        const query = { q: 'cladding', published_after: ago(1450), published_before: plus8(ago(1445)), limit: 2 };
        const first = await search({ ...query, order: 'oldest' });
        expect(first.meta).toMatchObject({ total: 5, pages: 3 });
        expect(slugs(first)).toEqual(['bulk-0010', 'bulk-0009']);
        const last = await search({ ...query, order: 'oldest', page: 3 });
        expect(slugs(last)).toEqual(['bulk-0006']);
        const relevance = await search({ ...query, limit: 50 });
        expect(sorted(relevance)).toEqual(['bulk-0006', 'bulk-0007', 'bulk-0008', 'bulk-0009', 'bulk-0010']);
      });

      it('pages the whole of a large result oldest first', async () => {
        const res = await search({ q: 'cladding', order: 'oldest', limit: 3 });
        expect(res.meta).toMatchObject({ total: BULK });
        expect(slugs(res)).toEqual(['bulk-1199', 'bulk-1198', 'bulk-1197']);
      });
    });
  });
}
