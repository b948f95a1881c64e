import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RawArticle } from '../../../src/demo/cms-store.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import { dumpSnapshot, ftsMatch, query, startWorker, type TestWorker } from '../../support/worker.js';

const NOW = '2026-11-01T12:00:00Z';

let dir: ReturnType<typeof tempDir>;
let dbPath: string;
let cms: TestCms;
let worker: TestWorker;
let api: TestApi | undefined;

// en: 23 published articles over two active sections (3 pages of 10), plus records that must
// never be stored; zh: 4 published with +08:00 timestamps and a draft.
const fiber = rawSection({ slug: 'fiber', name: 'Fiber Lasers', position: 1 });
const ultrafast = rawSection({ slug: 'ultrafast', name: 'Ultrafast', position: 2 });
const events = rawSection({ slug: 'events', name: 'Events', position: 3, active: false });
const zhFiber = rawSection({ slug: 'fiber', name: '光纤激光器', position: 1 });
const enPublished = Array.from({ length: 23 }, (_, i) =>
  rawArticle({ slug: `en-${i}`, section_slug: i % 2 === 0 ? 'fiber' : 'ultrafast', title: `Quarterly report number ${i}` }),
);
const enUnpublished = [
  rawArticle({ slug: 'a-draft', status: 'draft', published_at: null, section_slug: 'fiber' }),
  rawArticle({ slug: 'archived', status: 'archived', section_slug: 'fiber' }),
  rawArticle({ slug: 'scheduled', status: 'scheduled', section_slug: 'fiber' }),
  rawArticle({ slug: 'deleted', status: 'deleted', section_slug: 'fiber' }),
];
const zhPublished = Array.from({ length: 4 }, (_, i) =>
  rawArticle({
    locale: 'zh',
    slug: `zh-${i}`,
    title: `武汉光纤激光器出口增长 ${i}`,
    section_slug: 'fiber',
    published_at: `2026-10-20T16:0${i}:00+08:00`,
    updated_at: `2026-10-21T09:3${i}:00+08:00`,
  }),
);
const zhDraft = rawArticle({ locale: 'zh', slug: 'zh-draft', status: 'draft', published_at: null, updated_at: '2026-10-21T10:00:00+08:00' });

function seed(): void {
  for (const s of [fiber, ultrafast, events]) cms.store.upsertSection('en', s);
  cms.store.upsertSection('zh', zhFiber);
  cms.store.upsertArticles([...enPublished, ...enUnpublished, ...zhPublished, zhDraft]);
}

const later = (raw: RawArticle, changes: Partial<RawArticle>): RawArticle => ({
  ...raw,
  updated_at: '2026-11-01T11:00:00Z',
  ...changes,
});

beforeEach(async () => {
  dir = tempDir();
  dbPath = dir.path('snapshot.db');
  cms = await startTestCms();
  seed();
  worker = startWorker({ databasePath: dbPath, cmsUrl: cms.url, clock: testClock(NOW) });
});

afterEach(async () => {
  await api?.close();
  api = undefined;
  worker.close();
  await cms.close();
  dir.cleanup();
});

const cmsIds = (locale: string) =>
  query<{ cms_id: string }>(dbPath, 'SELECT cms_id FROM articles WHERE locale = ? ORDER BY cms_id', locale).map((r) => r.cms_id);
const idsOf = (raws: RawArticle[]) => raws.map((a) => a.id).sort();
const articleIds = () => query<{ id: number }>(dbPath, 'SELECT id FROM articles ORDER BY id').map((r) => r.id);

async function searchApi(q: string, locale = 'en', limit = 20): Promise<{ total: number; slugs: string[] }> {
  if (!api) {
    const { key } = addKey(dbPath);
    api = await startApi({ databasePath: dbPath, clock: testClock(NOW) });
    apiKey = key;
  }
  const res = await api.request.get('/api/v1/search').query({ q, locale, limit }).set('X-API-Key', apiKey);
  expect(res.status).toBe(200);
  return { total: res.body.meta.total, slugs: res.body.data.map((a: { slug: string }) => a.slug) };
}
let apiKey = '';

describe('full sync', () => {
  it('stores every published article and every section of both locales, and never an unpublished one', async () => {
    const summary = await worker.run('full');

    expect(summary).toMatchObject({ kind: 'full', status: 'succeeded', error: null, fetched: 27, upserted: 27, removed: 0, rejected: 0 });
    expect(cmsIds('en')).toEqual(idsOf(enPublished));
    expect(cmsIds('zh')).toEqual(idsOf(zhPublished));
    const statuses = query<{ status: string }>(dbPath, 'SELECT DISTINCT status FROM articles');
    expect(statuses).toEqual([{ status: 'published' }]);
    const sections = query(dbPath, 'SELECT locale, slug, cms_id, name, active, position FROM sections ORDER BY locale, position');
    expect(sections).toEqual([
      { locale: 'en', slug: 'fiber', cms_id: fiber.id, name: 'Fiber Lasers', active: 1, position: 1 },
      { locale: 'en', slug: 'ultrafast', cms_id: ultrafast.id, name: 'Ultrafast', active: 1, position: 2 },
      { locale: 'en', slug: 'events', cms_id: events.id, name: 'Events', active: 0, position: 3 },
      { locale: 'zh', slug: 'fiber', cms_id: zhFiber.id, name: '光纤激光器', active: 1, position: 1 },
    ]);
    const state = query(dbPath, 'SELECT locale, version, synced_at FROM snapshot_state ORDER BY locale');
    expect(state).toEqual([
      { locale: 'en', version: 1, synced_at: NOW },
      { locale: 'zh', version: 1, synced_at: NOW },
    ]);
    // The search index holds exactly the stored articles.
    expect(dumpSnapshot(dbPath).fts.rowids).toEqual(articleIds());
    // The listing of both locales asked for published records only; any other article request
    // is for recent changes (updated_since), never a listing of every status.
    const params = cms.requests.filter((r) => r.path.startsWith('/articles')).map((r) => new URL(r.path, 'http://x').searchParams);
    expect(params.every((p) => p.get('status') === 'published' || p.has('updated_since'))).toBe(true);
    const listing = cms.requests.filter((r) => r.path.startsWith('/articles') && !r.path.includes('updated_since='));
    expect(listing.map((r) => r.path)).toEqual([
      '/articles?locale=en&page=1&per_page=10&status=published',
      '/articles?locale=en&page=2&per_page=10&status=published',
      '/articles?locale=en&page=3&per_page=10&status=published',
      '/articles?locale=zh&page=1&per_page=10&status=published',
    ]);
  });

  it('stores every field of a record as sent, with Unicode text intact', async () => {
    const tricky = rawArticle({
      slug: 'tricky-text',
      section_slug: 'fiber',
      title: '激光 “quotes” \'single\' \\backslash\\ <b>bold</b> 🔬 עברית\u200f',
      excerpt: 'Line one\nLine two\ttab & ampersand </script>',
      body_markdown: '## 结果\n\nRevenue rose “4%” — <img src=x onerror=alert(1)> \\ 🔬\u202e reversed',
      author: 'Zoë Ångström',
      image: { url: 'https://img.example.com/a.jpg', alt: 'Alt ✓', credit: 'Sam Lee', credit_url: 'https://photos.example.com/@samlee', source_url: 'https://photos.example.com/photo/123' },
      published_at: '2026-10-20T16:00:00+08:00',
      updated_at: '2026-10-21T09:30:00.750-02:30',
    });
    cms.store.upsertArticle(tricky);

    expect((await worker.run('full')).status).toBe('succeeded');

    const [row] = query(dbPath, 'SELECT * FROM articles WHERE cms_id = ?', tricky.id);
    expect(row).toEqual({
      id: expect.any(Number),
      locale: 'en',
      cms_id: tricky.id,
      slug: 'tricky-text',
      status: 'published',
      title: tricky.title,
      excerpt: tricky.excerpt,
      body: tricky.body_markdown,
      section_slug: 'fiber',
      author: 'Zoë Ångström',
      image_url: 'https://img.example.com/a.jpg',
      image_alt: 'Alt ✓',
      image_credit: 'Sam Lee',
      image_credit_url: 'https://photos.example.com/@samlee',
      image_source_url: 'https://photos.example.com/photo/123',
      published_at: '2026-10-20T08:00:00Z',
      updated_at: '2026-10-21T12:00:00Z',
      url: tricky.url,
      content_hash: expect.any(String),
    });
  });

  it('stores +08:00 timestamps as whole-second UTC with a Z', async () => {
    await worker.run('full');
    const rows = query<{ slug: string; published_at: string; updated_at: string }>(
      dbPath,
      `SELECT slug, published_at, updated_at FROM articles WHERE locale = 'zh' ORDER BY slug`,
    );
    expect(rows).toEqual([
      { slug: 'zh-0', published_at: '2026-10-20T08:00:00Z', updated_at: '2026-10-21T01:30:00Z' },
      { slug: 'zh-1', published_at: '2026-10-20T08:01:00Z', updated_at: '2026-10-21T01:31:00Z' },
      { slug: 'zh-2', published_at: '2026-10-20T08:02:00Z', updated_at: '2026-10-21T01:32:00Z' },
      { slug: 'zh-3', published_at: '2026-10-20T08:03:00Z', updated_at: '2026-10-21T01:33:00Z' },
    ]);
  });

  it('upserts nothing on a second full sync without CMS changes and keeps snapshot_state.version', async () => {
    await worker.run('full');
    const before = dumpSnapshot(dbPath);

    const second = await worker.run('full');

    expect(second).toMatchObject({ status: 'succeeded', fetched: 27, upserted: 0, removed: 0, rejected: 0 });
    const after = dumpSnapshot(dbPath);
    expect(after.articles).toEqual(before.articles);
    expect(after.sections).toEqual(before.sections);
    expect(after.fts).toEqual(before.fts);
    expect(after.snapshotState).toEqual(before.snapshotState);
  });

  it('removes an article deleted from the CMS, or unpublished, in the next full sync, search entry included', async () => {
    await worker.run('full');
    const [gone, unpublished, archived] = [enPublished[0]!, enPublished[1]!, zhPublished[0]!];
    const goneRowId = query<{ id: number }>(dbPath, 'SELECT id FROM articles WHERE cms_id = ?', gone.id)[0]!.id;
    expect(ftsMatch(dbPath, '"report" "number" "0"')).toContain(goneRowId);
    cms.store.removeArticle(gone.id);
    cms.store.upsertArticle(later(unpublished, { status: 'draft' }));
    cms.store.upsertArticle(later(archived, { status: 'archived' }));

    const summary = await worker.run('full');

    expect(summary).toMatchObject({ status: 'succeeded', fetched: 24, upserted: 0, removed: 3 });
    expect(cmsIds('en')).toEqual(idsOf(enPublished.slice(2)));
    expect(cmsIds('zh')).toEqual(idsOf(zhPublished.slice(1)));
    expect(ftsMatch(dbPath, '"report" "number" "0"')).not.toContain(goneRowId);
    expect(dumpSnapshot(dbPath).fts.rowids).toEqual(articleIds());
    const versions = query(dbPath, 'SELECT locale, version FROM snapshot_state ORDER BY locale');
    expect(versions).toEqual([
      { locale: 'en', version: 2 },
      { locale: 'zh', version: 2 },
    ]);
  });

  it('updates a changed record, and search through the API finds the new title and no longer the old one', async () => {
    await worker.run('full');
    const target = enPublished[4]!;
    // One-character words such as "4" are not searched (src/search/normalize.ts): look among all old-title hits.
    expect((await searchApi('Quarterly report number', 'en', 50)).slugs).toContain(target.slug);
    expect((await searchApi('Photonics breakthrough')).total).toBe(0);

    cms.store.upsertArticle(later(target, { title: 'Photonics breakthrough in Jena' }));
    const summary = await worker.run('full');

    expect(summary).toMatchObject({ status: 'succeeded', upserted: 1, removed: 0 });
    expect(query(dbPath, 'SELECT title, updated_at FROM articles WHERE cms_id = ?', target.id)).toEqual([
      { title: 'Photonics breakthrough in Jena', updated_at: '2026-11-01T11:00:00Z' },
    ]);
    expect(await searchApi('Photonics breakthrough')).toEqual({ total: 1, slugs: [target.slug] });
    expect((await searchApi('Quarterly report number', 'en', 50)).slugs).not.toContain(target.slug);
    expect(query(dbPath, `SELECT version FROM snapshot_state WHERE locale = 'en'`)).toEqual([{ version: 2 }]);
    expect(query(dbPath, `SELECT version FROM snapshot_state WHERE locale = 'zh'`)).toEqual([{ version: 1 }]);
  });

  it('keeps an article searchable by its section name when that section was rejected in the same run', async () => {
    await worker.run('full');
    // The section's record is invalid this time (its stored version stays), and an article in it changed.
    cms.store.upsertSection('en', { ...ultrafast, description: 'x'.repeat(10_001), updated_at: '2026-11-01T11:00:00Z' });
    const edited = enPublished.find((a) => a.section_slug === 'ultrafast')!;
    cms.store.upsertArticle(later(edited, { title: 'An edited quarterly report' }));

    const summary = await worker.run('full');

    expect(summary.status).toBe('succeeded');
    expect(query(dbPath, `SELECT name FROM sections WHERE locale = 'en' AND slug = 'ultrafast'`)).toEqual([{ name: 'Ultrafast' }]);
    const inUltrafast = enPublished.filter((a) => a.section_slug === 'ultrafast').length;
    expect((await searchApi('Ultrafast')).total).toBe(inUltrafast);
  });

  it('mirrors section changes: a removed section goes, a renamed one is searchable by its new name', async () => {
    await worker.run('full');
    cms.store.removeSection('en', events.id);
    cms.store.upsertSection('en', { ...ultrafast, name: 'Attosecond Science', updated_at: '2026-11-01T11:00:00Z' });

    const summary = await worker.run('full');

    expect(summary.status).toBe('succeeded');
    expect(query(dbPath, `SELECT slug, name FROM sections WHERE locale = 'en' ORDER BY position`)).toEqual([
      { slug: 'fiber', name: 'Fiber Lasers' },
      { slug: 'ultrafast', name: 'Attosecond Science' },
    ]);
    const inUltrafast = enPublished.filter((a) => a.section_slug === 'ultrafast').length;
    expect((await searchApi('Attosecond')).total).toBe(inUltrafast);
  });
});
