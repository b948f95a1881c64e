import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RawArticle } from '../../../src/demo/cms-store.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import { dumpSnapshot, query, startWorker, syncRuns, type TestWorker } from '../../support/worker.js';

// The first sync starts at T0; the next one ten minutes later. Overlap: 60 s.
const T0 = '2026-11-01T12:00:00Z';
const T1 = '2026-11-01T12:10:00Z';
const SINCE_T0 = '2026-11-01T11:59:00Z';
const at = (minutesAfterT0: number) => new Date(Date.parse(T0) + minutesAfterT0 * 60_000).toISOString().replace('.000Z', 'Z');

let dir: ReturnType<typeof tempDir>;
let dbPath: string;
let cms: TestCms;
let worker: TestWorker;
let clock: ReturnType<typeof testClock>;
let api: TestApi | undefined;

const section = rawSection({ slug: 'news', name: 'News' });
const zhSection = rawSection({ slug: 'news', name: '新闻' });
const articles = Array.from({ length: 15 }, (_, i) => rawArticle({ slug: `story-${i}`, section_slug: 'news' }));
const zhArticles = Array.from({ length: 3 }, (_, i) =>
  rawArticle({ locale: 'zh', slug: `zh-story-${i}`, section_slug: 'news', updated_at: `2026-10-21T09:3${i}:00+08:00` }),
);

beforeEach(async () => {
  dir = tempDir();
  dbPath = dir.path('snapshot.db');
  cms = await startTestCms();
  cms.store.upsertSection('en', section);
  cms.store.upsertSection('zh', zhSection);
  cms.store.upsertArticles([...articles, ...zhArticles]);
  clock = testClock(T0);
  worker = startWorker({ databasePath: dbPath, cmsUrl: cms.url, clock, overlapSeconds: 60 });
});

afterEach(async () => {
  await api?.close();
  api = undefined;
  worker.close();
  await cms.close();
  dir.cleanup();
});

const change = (raw: RawArticle, minutesAfterT0: number, changes: Partial<RawArticle> = {}): RawArticle => ({
  ...raw,
  updated_at: at(minutesAfterT0),
  ...changes,
});
const articleRequests = () =>
  cms.requests.filter((r) => r.path.startsWith('/articles')).map((r) => new URL(r.path, 'http://cms.test').searchParams);
const storedSlugs = (locale = 'en') =>
  query<{ slug: string }>(dbPath, 'SELECT slug FROM articles WHERE locale = ? ORDER BY slug', locale).map((r) => r.slug);

async function apiGet(path: string) {
  if (!api) {
    apiKey = addKey(dbPath).key;
    api = await startApi({ databasePath: dbPath, clock: testClock(T1) });
  }
  return api.request.get(path).set('X-API-Key', apiKey);
}
let apiKey = '';

describe('incremental sync', () => {
  it('runs full while nothing was synced, then incremental', async () => {
    const first = await worker.run('auto');
    expect(first).toMatchObject({ kind: 'full', status: 'succeeded', upserted: 18 });

    clock.set(T1);
    const second = await worker.run('auto');
    expect(second).toMatchObject({ kind: 'incremental', status: 'succeeded', upserted: 0, removed: 0 });
    expect(syncRuns(dbPath).map((r) => [r.kind, r.status])).toEqual([
      ['full', 'succeeded'],
      ['incremental', 'succeeded'],
    ]);
  });

  it('stays full while the last full sync failed', async () => {
    cms.failNext(1, { status: 404 });
    expect(await worker.run('auto')).toMatchObject({ kind: 'full', status: 'failed' });
    expect(await worker.run('auto')).toMatchObject({ kind: 'full', status: 'succeeded' });
    expect(await worker.run('auto')).toMatchObject({ kind: 'incremental', status: 'succeeded' });
  });

  it('asks for every status changed since the last successful start minus the overlap', async () => {
    await worker.run('full');
    cms.requests.length = 0;
    clock.set(T1);

    await worker.run('incremental');

    const pages = articleRequests();
    expect(pages.map((p) => [p.get('locale'), p.get('updated_since'), p.get('status')])).toEqual([
      ['en', SINCE_T0, null],
      ['zh', SINCE_T0, null],
    ]);
  });

  it('takes updated_since from the last successful run, not from a failed one', async () => {
    await worker.run('full');
    clock.set(T1);
    await cms.setDown(true);
    expect((await worker.run('incremental')).status).toBe('failed');
    await cms.setDown(false);
    cms.requests.length = 0;
    clock.set('2026-11-01T12:20:00Z');

    expect((await worker.run('incremental')).status).toBe('succeeded');

    expect(articleRequests().map((p) => p.get('updated_since'))).toEqual([SINCE_T0, SINCE_T0]);
  });

  it('upserts published changes and removes articles that became draft, archived or deleted', async () => {
    await worker.run('full');
    const [edited, drafted, archived, deleted] = [articles[2]!, articles[3]!, articles[4]!, zhArticles[0]!];
    const fresh = rawArticle({ slug: 'fresh-story', section_slug: 'news', updated_at: at(7) });
    // Changed during the previous sync, committed after it started: caught by the overlap.
    const late = rawArticle({ slug: 'late-story', section_slug: 'news', updated_at: at(-0.5) });
    cms.store.upsertArticles([
      change(edited, 5, { title: 'Edited headline' }),
      change(drafted, 6, { status: 'draft', published_at: null }),
      change(archived, 6, { status: 'archived' }),
      { ...change(deleted, 6, { status: 'deleted' }), updated_at: '2026-11-01T20:06:00+08:00' },
      fresh,
      late,
    ]);
    clock.set(T1);

    const summary = await worker.run('incremental');

    expect(summary).toMatchObject({ kind: 'incremental', status: 'succeeded', fetched: 6, upserted: 3, removed: 3, rejected: 0 });
    expect(storedSlugs()).toEqual(
      [...articles.filter((a) => ![drafted, archived].includes(a)).map((a) => a.slug), 'fresh-story', 'late-story'].sort(),
    );
    expect(storedSlugs('zh')).toEqual(['zh-story-1', 'zh-story-2']);
    expect(query(dbPath, 'SELECT title, updated_at FROM articles WHERE cms_id = ?', edited.id)).toEqual([
      { title: 'Edited headline', updated_at: at(5) },
    ]);
    expect(dumpSnapshot(dbPath).fts.rowids).toEqual(query<{ id: number }>(dbPath, 'SELECT id FROM articles ORDER BY id').map((r) => r.id));
  });

  it('makes articles unpublished between syncs disappear from the API', async () => {
    await worker.run('full');
    const [drafted, archived] = [articles[7]!, articles[8]!];
    expect((await apiGet(`/api/v1/articles/${drafted.slug}`)).status).toBe(200);
    expect((await apiGet(`/api/v1/articles/${archived.slug}`)).status).toBe(200);
    const totalBefore = (await apiGet('/api/v1/articles')).body.meta.total;

    cms.store.upsertArticles([change(drafted, 3, { status: 'draft', published_at: null }), change(archived, 4, { status: 'archived' })]);
    clock.set(T1);
    expect(await worker.run('auto')).toMatchObject({ kind: 'incremental', status: 'succeeded', removed: 2 });

    expect((await apiGet(`/api/v1/articles/${drafted.slug}`)).status).toBe(404);
    expect((await apiGet(`/api/v1/articles/${archived.slug}`)).status).toBe(404);
    expect((await apiGet('/api/v1/articles')).body.meta.total).toBe(totalBefore - 2);
    const search = await apiGet(`/api/v1/search?q=${encodeURIComponent(drafted.title)}`);
    expect(search.body.data.map((a: { slug: string }) => a.slug)).not.toContain(drafted.slug);
  });

  it('leaves an article deleted outright alone (it never shows up again) until the next full sync removes it', async () => {
    await worker.run('full');
    const gone = articles[10]!;
    cms.store.removeArticle(gone.id);
    clock.set(T1);

    expect(await worker.run('incremental')).toMatchObject({ status: 'succeeded', removed: 0 });
    expect(storedSlugs()).toContain(gone.slug);

    expect(await worker.run('full')).toMatchObject({ status: 'succeeded', removed: 1 });
    expect(storedSlugs()).not.toContain(gone.slug);
  });

  it('takes down an article whose record says archived but fails validation for another field (its url cleared)', async () => {
    await worker.run('full');
    const archived = articles[6]!;
    // The takedown matters, not the rest of the record: the CMS clears the url of what it archives.
    cms.store.upsertArticle({ ...change(archived, 3, { status: 'archived' }), url: null } as unknown as RawArticle);
    clock.set(T1);

    const summary = await worker.run('incremental');

    expect(summary).toMatchObject({ kind: 'incremental', status: 'succeeded', upserted: 0, removed: 1, rejected: 1 });
    expect(storedSlugs()).not.toContain(archived.slug);
    expect(query(dbPath, `SELECT kind FROM feed_entries WHERE slug = ?`, archived.slug)).toEqual([{ kind: 'delete' }]);
  });

  it('keeps the stored version of an article whose record fails validation and says published, or says nothing readable about its status', async () => {
    await worker.run('full');
    const [published, noStatus] = [articles[6]!, articles[7]!];
    cms.store.upsertArticle({ ...change(published, 3, { title: 'Broken edit' }), url: null } as unknown as RawArticle);
    cms.store.upsertArticle({ ...change(noStatus, 4, { title: 'Broken edit' }), status: 42 } as unknown as RawArticle);
    clock.set(T1);

    const summary = await worker.run('incremental');

    expect(summary).toMatchObject({ kind: 'incremental', status: 'succeeded', upserted: 0, removed: 0, rejected: 2 });
    const title = (cmsId: string) => query(dbPath, 'SELECT title FROM articles WHERE cms_id = ?', cmsId);
    expect(title(published.id)).toEqual([{ title: published.title }]);
    expect(title(noStatus.id)).toEqual([{ title: noStatus.title }]);
  });

  it('after a run whose listing never settled, the next run asks again from the unsettled run\'s own since, and takes down what it skipped', async () => {
    await worker.run('full');
    const skipped = articles[14]!;
    // Twelve changes since T0 (two pages of the listing), and a takedown among them.
    for (let i = 0; i < 12; i++) cms.store.upsertArticle(change(articles[i]!, 1 + i / 10, { title: `Edit ${i}` }));
    cms.store.upsertArticle(change(skipped, 2, { status: 'archived' }));
    // While page 2 is read an already-read record is edited again (it moves to the end, so it is
    // seen twice) on every read; and the pages slide past the takedown every time.
    let churn = 0;
    cms.onPage((q) => {
      if (q.locale !== 'en' || q.page !== 2 || q.updatedSince === undefined) return;
      churn += 1;
      cms.store.upsertArticle(change(articles[churn]!, 8 + churn / 10, { title: `Churn ${churn}` }));
    });
    cms.rewritePages((body) => ({ ...body, data: body.data.filter((r) => r.id !== skipped.id) }));
    clock.set(T1);

    const unsettled = await worker.run('incremental');
    expect(unsettled).toMatchObject({ status: 'succeeded', removed: 0 });
    expect(unsettled.warnings).toEqual(['en: the CMS kept changing while it was read; the next run reads these changes again']);
    expect(storedSlugs()).toContain(skipped.slug);

    cms.onPage(undefined);
    cms.rewritePages(undefined);
    cms.requests.length = 0;
    clock.set('2026-11-01T12:20:00Z');
    expect(await worker.run('incremental')).toMatchObject({ status: 'succeeded', removed: 1 });
    expect(new Set(articleRequests().map((p) => p.get('updated_since')))).toEqual(new Set([SINCE_T0]));
    expect(storedSlugs()).not.toContain(skipped.slug);

    // That run settled: the one after it starts from it again.
    cms.requests.length = 0;
    clock.set('2026-11-01T12:30:00Z');
    expect((await worker.run('incremental')).status).toBe('succeeded');
    expect(articleRequests().map((p) => p.get('updated_since'))).toEqual(['2026-11-01T12:19:00Z', '2026-11-01T12:19:00Z']);
  });

  it('does not bump snapshot_state.version when an incremental sync changes nothing', async () => {
    await worker.run('full');
    const before = dumpSnapshot(dbPath);
    clock.set(T1);

    expect(await worker.run('incremental')).toMatchObject({ status: 'succeeded', upserted: 0, removed: 0 });

    const after = dumpSnapshot(dbPath);
    expect(after.snapshotState.map((s) => (s as { version: number }).version)).toEqual([1, 1]);
    expect(after.articles).toEqual(before.articles);
    expect(after.fts).toEqual(before.fts);
  });
});
