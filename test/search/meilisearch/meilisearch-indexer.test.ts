import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RawArticle } from '../../../src/demo/cms-store.js';
import { getWorkerState, setWorkerState } from '../../../src/db/snapshot/sync-runs.js';
import type { Locale } from '../../../src/locale.js';
import { BODY_FIELDS } from '../../../src/search/meilisearch/documents.js';
import type { MeilisearchIndexer } from '../../../src/search/meilisearch/indexer.js';
import { testClock } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { startFakeMeilisearch, type FakeMeilisearch, type RequestLogEntry } from '../../fakes/fake-meilisearch.js';
import { meiliFixture, testIndexConfig, type MeiliFixture } from '../../support/meili-fixture.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import { query, REPO_ROOT, startWorker, type TestWorker } from '../../support/worker.js';

/*
 * The worker feeding Meilisearch through the real sync path: runSync against a test CMS, the
 * real MeilisearchIndexer, the fake Meilisearch driven by the real client.
 */

const T0 = '2026-11-01T12:00:00Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString().replace('.000Z', 'Z');
const MASTER_KEY = 'indexer-master-key-91ce04';
const BATCH = 7;
const EN_COUNT = 40;
const ZH_COUNT = 9;
const REBUILD_FLAG = 'search_rebuild_needed';

// The shipped file, read here rather than through the code under test.
const shipped = JSON.parse(readFileSync(join(REPO_ROOT, 'meilisearch.config.json'), 'utf8')) as {
  settings: Record<string, unknown>;
  locales: Record<Locale, { settings: Record<string, unknown> }>;
};

const sections = {
  en: [rawSection({ slug: 'fiber', name: 'Fiber Lasers', position: 1 }), rawSection({ slug: 'events', name: 'Events', position: 2, active: false })],
  zh: [rawSection({ slug: 'fiber', name: '光纤激光器', position: 1 })],
};
const enArticles = Array.from({ length: EN_COUNT }, (_, i) =>
  rawArticle({ slug: `en-${i}`, title: `Quarterly report number ${i}`, section_slug: i % 5 === 0 ? 'events' : 'fiber' }),
);
const zhArticles = Array.from({ length: ZH_COUNT }, (_, i) =>
  rawArticle({ locale: 'zh', slug: `zh-${i}`, title: `武汉光纤激光器出口增长 ${i}`, section_slug: 'fiber', updated_at: `2026-10-21T09:3${i}:00+08:00` }),
);

let dir: ReturnType<typeof tempDir>;
let dbPath: string;
let cms: TestCms;
let fake: FakeMeilisearch;
let meili: MeiliFixture;
let indexer: MeilisearchIndexer;
let worker: TestWorker;
let clock: ReturnType<typeof testClock>;

beforeEach(async () => {
  dir = tempDir('meili-indexer-');
  dbPath = dir.path('snapshot.db');
  cms = await startTestCms();
  for (const locale of ['en', 'zh'] as const) for (const s of sections[locale]) cms.store.upsertSection(locale, s);
  cms.store.upsertArticles([...enArticles, ...zhArticles]);
  fake = await startFakeMeilisearch({ masterKey: MASTER_KEY, taskDelayMs: 2 });
  meili = meiliFixture({ host: fake.url, apiKey: MASTER_KEY }, { label: 'indexer' });
  indexer = meili.indexer({ timeoutMs: 2_000, config: testIndexConfig({ batchSize: BATCH, taskTimeoutMs: 10_000 }) });
  clock = testClock(T0);
  worker = startWorker({ databasePath: dbPath, cmsUrl: cms.url, clock, pageSize: 20 });
});

afterEach(async () => {
  worker.close();
  await cms.close();
  await fake.close();
  dir.cleanup();
});

const run = (kind: 'full' | 'incremental' | 'reindex', overrides: Parameters<TestWorker['run']>[1] = {}) =>
  worker.run(kind, { indexer, ...overrides });

/** Runs `fn` and returns the requests the fake received meanwhile. */
async function requestsDuring<T>(fn: () => Promise<T>): Promise<{ result: T; requests: RequestLogEntry[] }> {
  const from = fake.requests.length;
  const result = await fn();
  return { result, requests: fake.requests.slice(from) };
}

/** Calls `hook` synchronously when the first request matching `match` arrives, before it is answered. */
function onFirstRequest(match: (r: RequestLogEntry) => boolean, hook: () => void): void {
  const log = fake.requests;
  let fired = false;
  log.push = function (...entries: RequestLogEntry[]) {
    const n = Array.prototype.push.apply(this, entries);
    if (!fired && entries.some(match)) {
      fired = true;
      hook();
    }
    return n;
  };
}

/**
 * Collects unhandled rejections while `fn` runs (and a moment after): in the worker process one
 * would be fatal, so a request the indexer gave up on must not reject unobserved.
 */
async function unhandledRejectionsDuring(fn: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => void seen.push(reason);
  process.on('unhandledRejection', listener);
  try {
    await fn();
    await new Promise((resolve) => setTimeout(resolve, 100));
  } finally {
    process.off('unhandledRejection', listener);
  }
  return seen;
}

const snapshotIds = (locale: Locale) =>
  query<{ id: number }>(dbPath, 'SELECT id FROM articles WHERE locale = ? ORDER BY id', locale).map((r) => r.id);
const indexedIds = (locale: Locale) => fake.documents(meili.uid(locale)).map((d) => Number(d['id'])).sort((a, b) => a - b);
const indexedTitle = (locale: Locale, slug: string) => fake.documents(meili.uid(locale)).find((d) => d['slug'] === slug)?.['title'];
const documentPosts = (requests: RequestLogEntry[], uid?: string) =>
  requests.filter((r) => r.method === 'POST' && /^\/indexes\/[^/]+\/documents$/.test(r.path) && (uid === undefined || r.path === `/indexes/${uid}/documents`));
const deletePosts = (requests: RequestLogEntry[]) => requests.filter((r) => r.method === 'POST' && r.path.endsWith('/documents/delete-batch'));
const swaps = (requests: RequestLogEntry[]) => requests.filter((r) => r.method === 'POST' && r.path === '/swap-indexes');
const unfinished = () => fake.tasks().filter((t) => t.status === 'enqueued' || t.status === 'processing');
const later = (raw: RawArticle, minutes: number, changes: Partial<RawArticle>): RawArticle => ({ ...raw, updated_at: at(minutes), ...changes });

function expectIndexesMatchSnapshot(): void {
  expect(fake.indexUids()).toEqual([meili.uid('en'), meili.uid('zh')]);
  expect(indexedIds('en')).toEqual(snapshotIds('en'));
  expect(indexedIds('zh')).toEqual(snapshotIds('zh'));
}

describe('full sync', () => {
  it('builds one index per locale with every snapshot article as a document', async () => {
    const summary = await run('full');
    expect(summary).toMatchObject({ status: 'succeeded', error: null });
    expectIndexesMatchSnapshot();
    expect(indexedIds('en')).toHaveLength(EN_COUNT);
    expect(indexedIds('zh')).toHaveLength(ZH_COUNT);
    const [row] = query<{ id: number }>(dbPath, `SELECT id FROM articles WHERE slug = 'en-1'`);
    const doc = fake.documents(meili.uid('en')).find((d) => d['slug'] === 'en-1');
    expect(doc).toMatchObject({
      id: row!.id,
      slug: 'en-1',
      title: 'Quarterly report number 1',
      excerpt: enArticles[1]!.excerpt,
      body: enArticles[1]!.body_markdown,
      section_slug: 'fiber',
      section_name: 'Fiber Lasers',
      author: 'Jane Doe',
      published_at_ts: Date.parse(enArticles[1]!.published_at!) / 1000,
    });
    // The digest a full sync compares to send only what differs.
    expect(doc!['h']).toMatch(/^[0-9a-f]{16}$/);
  });

  it('applies meilisearch.config.json to each index: ranked searchable attributes, filters, sort, ranking, maxTotalHits, cmn on zh only', async () => {
    expect((await run('full')).status).toBe('succeeded');
    for (const locale of ['en', 'zh'] as const) {
      const expected = { ...shipped.settings, ...shipped.locales[locale].settings } as Record<string, unknown>;
      const settings = fake.settings(meili.uid(locale));
      // `body` stands for its parts (long bodies are sent in parts under the position limit).
      expect(settings.searchableAttributes).toEqual(['title', 'excerpt', ...BODY_FIELDS, 'section_name', 'author']);
      expect(expected['searchableAttributes']).toEqual(['title', 'excerpt', 'body', 'section_name', 'author']);
      // `id` too: the API leaves out ids the index has not caught up with, in the search itself.
      expect([...settings.filterableAttributes].sort()).toEqual(['id', 'published_at_ts', 'section_slug']);
      // slug too: order=newest and oldest break ties of publication time by it (decision 0061).
      expect(settings.sortableAttributes).toEqual(['published_at_ts', 'slug']);
      expect(settings.rankingRules).toEqual(expected['rankingRules']);
      expect(settings.rankingRules.at(-1)).toBe('published_at_ts:desc');
      // Exact totals for the whole corpus: far above the default 1000.
      expect(settings.pagination.maxTotalHits).toBe((expected['pagination'] as { maxTotalHits: number }).maxTotalHits);
      expect(settings.pagination.maxTotalHits).toBeGreaterThanOrEqual(500_000);
      expect(settings.localizedAttributes).toEqual(expected['localizedAttributes']);
    }
    expect(fake.settings(meili.uid('zh')).localizedAttributes).toEqual([{ attributePatterns: ['*'], locales: ['cmn'] }]);
    expect(JSON.stringify(fake.settings(meili.uid('en')).localizedAttributes)).not.toContain('cmn');
    expect(fake.settings(meili.uid('en')).typoTolerance).toMatchObject({ enabled: true, minWordSizeForTypos: { oneTypo: 5, twoTypos: 9 } });
    expect(fake.settings(meili.uid('zh')).typoTolerance.enabled).toBe(false);
  });

  it('a rebuild fills a _next index beside the live one, swaps them atomically, then deletes _next', async () => {
    expect((await run('full')).status).toBe('succeeded');
    cms.store.upsertArticle(later(enArticles[3]!, 5, { title: 'Renamed in the CMS' }));
    clock.set(at(10));
    setWorkerState(worker.db, REBUILD_FLAG, 'pending', T0);
    const { result, requests } = await requestsDuring(() => run('full'));
    expect(result.status).toBe('succeeded');

    for (const locale of ['en', 'zh'] as const) {
      const live = meili.uid(locale);
      const next = `${live}_next`;
      // The live index takes only the sync's own changes (so edits stay searchable), never the corpus.
      expect(documentPosts(requests, live).flatMap((r) => r.body as unknown[]).length).toBeLessThanOrEqual(1);
      const posts = documentPosts(requests, next).map((r) => requests.indexOf(r));
      expect(posts.length).toBeGreaterThan(0);
      const swap = requests.findIndex((r) => r.path === '/swap-indexes' && JSON.stringify(r.body).includes(`"${next}"`));
      expect(swap).toBeGreaterThan(Math.max(...posts));
      // `{ indexes }` alone: what every version from 1.16 on accepts (`rename` is 1.18+).
      expect(requests[swap]!.body).toEqual([{ indexes: [live, next] }]);
      const removal = requests.findIndex((r) => r.method === 'DELETE' && r.path === `/indexes/${next}`);
      expect(removal).toBeGreaterThan(swap);
    }
    expect(fake.tasks().filter((t) => t.type === 'indexSwap').every((t) => t.status === 'succeeded')).toBe(true);
    expectIndexesMatchSnapshot();
    expect(indexedTitle('en', 'en-3')).toBe('Renamed in the CMS');
  });

  it('a later full sync sends only the difference: no index created, no swap, only the edited, new and removed articles', async () => {
    expect((await run('full')).status).toBe('succeeded');
    clock.set(at(10));
    const unchanged = await requestsDuring(() => run('full'));
    expect(unchanged.result.status).toBe('succeeded');
    expect(documentPosts(unchanged.requests)).toEqual([]);
    expect(deletePosts(unchanged.requests)).toEqual([]);
    expect(swaps(unchanged.requests)).toEqual([]);
    expect(unchanged.requests.filter((r) => r.method === 'POST' && r.path === '/indexes')).toEqual([]);

    cms.store.upsertArticle(later(enArticles[3]!, 15, { title: 'Edited in the CMS' }));
    cms.store.upsertArticle(later(zhArticles[1]!, 15, { title: '新的标题' }));
    clock.set(at(20));
    const edited = await requestsDuring(() => run('full'));
    expect(edited.result.status).toBe('succeeded');
    expect(swaps(edited.requests)).toEqual([]);
    const sent = documentPosts(edited.requests).flatMap((r) => (r.body as { slug: string }[]).map((d) => d.slug));
    expect(sent.sort()).toEqual(['en-3', 'zh-1']);
    expect(indexedTitle('en', 'en-3')).toBe('Edited in the CMS');
    expectIndexesMatchSnapshot();
  });

  it('a full sync repairs an index that drifted from the snapshot: a lost document is sent again, a stray one deleted', async () => {
    expect((await run('full')).status).toBe('succeeded');
    const [lost] = indexedIds('en');
    await meili.client.index(meili.uid('en')).deleteDocument(lost!).waitTask();
    await meili.client.index(meili.uid('zh')).addDocuments([{ id: 999_999, slug: 'stray', title: '多余', h: 'x' }]).waitTask();
    clock.set(at(10));
    const { result, requests } = await requestsDuring(() => run('full'));
    expect(result.status).toBe('succeeded');
    expect(documentPosts(requests).flatMap((r) => (r.body as { id: number }[]).map((d) => d.id))).toEqual([lost]);
    expect(deletePosts(requests).map((r) => r.body)).toEqual([[999_999]]);
    expect(swaps(requests)).toEqual([]);
    expectIndexesMatchSnapshot();
  });

  it('rebuilds when the engine version changes (a dumpless upgrade), recording the version it indexed with', async () => {
    expect((await run('full')).status).toBe('succeeded');
    expect(getWorkerState(worker.db, 'meilisearch_indexed_with_en')).toBe('1.19.0 format 2');
    clock.set(at(10));
    fake.setVersion('1.25.1');
    const { result, requests } = await requestsDuring(() => run('incremental'));
    expect(result.status).toBe('succeeded');
    expect(swaps(requests)).toHaveLength(2);
    expect(getWorkerState(worker.db, 'meilisearch_indexed_with_zh')).toBe('1.25.1 format 2');
    clock.set(at(20));
    const again = await requestsDuring(() => run('full'));
    expect(swaps(again.requests)).toEqual([]);
    expect(documentPosts(again.requests)).toEqual([]);
  });

  it('while one locale rebuilds, the other\'s changes are already in its live index', async () => {
    expect((await run('full')).status).toBe('succeeded');
    cms.store.upsertArticle(later(zhArticles[4]!, 5, { title: '重建期间的编辑' }));
    clock.set(at(10));
    // The en index loses its settings: it must be rebuilt; zh only takes its change.
    await meili.client.index(meili.uid('en')).updateSettings({ rankingRules: ['words'] }).waitTask();
    let zhDuringRebuild: unknown;
    onFirstRequest(
      (r) => r.method === 'POST' && r.path === `/indexes/${meili.uid('en')}_next/documents`,
      () => (zhDuringRebuild = indexedTitle('zh', 'zh-4')),
    );
    const { result, requests } = await requestsDuring(() => run('incremental'));
    expect(result.status).toBe('succeeded');
    expect(zhDuringRebuild).toBe('重建期间的编辑');
    expect(swaps(requests)).toHaveLength(1);
  });

  it('sends documents in batches of at most batchSize', async () => {
    const { requests } = await requestsDuring(() => run('full'));
    const posts = documentPosts(requests);
    for (const post of posts) {
      expect(Array.isArray(post.body)).toBe(true);
      expect((post.body as unknown[]).length).toBeLessThanOrEqual(BATCH);
    }
    const sent = posts.flatMap((p) => (p.body as { id: number }[]).map((d) => d.id));
    expect(new Set(sent).size).toBe(EN_COUNT + ZH_COUNT);
    expect(posts.length).toBe(Math.ceil(EN_COUNT / BATCH) + Math.ceil(ZH_COUNT / BATCH));
  });
});

describe('incremental sync', () => {
  it('adds changed and new documents and deletes removed ones in the live indexes, without a rebuild', async () => {
    expect((await run('full')).status).toBe('succeeded');
    const removedId = query<{ id: number }>(dbPath, `SELECT id FROM articles WHERE slug = 'en-7'`)[0]!.id;
    cms.store.upsertArticle(later(enArticles[2]!, 5, { title: 'Changed title' }));
    cms.store.upsertArticle(later(enArticles[7]!, 5, { status: 'archived' }));
    cms.store.upsertArticle(rawArticle({ slug: 'brand-new', title: 'Brand new story', section_slug: 'fiber', updated_at: at(6) }));
    cms.store.upsertArticle(later(zhArticles[1]!, 7, { title: '改过的标题' }));
    clock.set(at(10));

    const { result, requests } = await requestsDuring(() => run('incremental'));
    expect(result).toMatchObject({ kind: 'incremental', status: 'succeeded' });
    expect(swaps(requests)).toEqual([]);
    expect(requests.some((r) => r.path.includes('_next'))).toBe(false);
    const sentEn = documentPosts(requests, meili.uid('en')).flatMap((p) => (p.body as { slug: string }[]).map((d) => d.slug));
    expect(sentEn.sort()).toEqual(['brand-new', 'en-2']);
    expect(deletePosts(requests).map((r) => r.body)).toEqual([[removedId]]);

    expectIndexesMatchSnapshot();
    expect(indexedIds('en')).not.toContain(removedId);
    expect(indexedTitle('en', 'en-2')).toBe('Changed title');
    expect(indexedTitle('en', 'brand-new')).toBe('Brand new story');
    expect(indexedTitle('zh', 'zh-1')).toBe('改过的标题');
  });

  it('pushes a change to Meilisearch only once the snapshot has committed it', async () => {
    expect((await run('full')).status).toBe('succeeded');
    cms.store.upsertArticle(later(enArticles[5]!, 5, { title: 'Committed first' }));
    clock.set(at(10));
    let seenBySnapshot: unknown;
    onFirstRequest(
      (r) => r.method === 'POST' && r.path === `/indexes/${meili.uid('en')}/documents`,
      // A fresh connection sees only what is committed.
      () => (seenBySnapshot = query(dbPath, `SELECT title FROM articles WHERE slug = 'en-5'`)),
    );
    expect((await run('incremental')).status).toBe('succeeded');
    expect(seenBySnapshot).toEqual([{ title: 'Committed first' }]);
    expect(indexedTitle('en', 'en-5')).toBe('Committed first');
  });

  it('sends changes and deletions in batches of at most batchSize', async () => {
    expect((await run('full')).status).toBe('succeeded');
    enArticles.slice(0, 17).forEach((a, i) => cms.store.upsertArticle(later(a, 5, { title: `Updated ${i}` })));
    enArticles.slice(20, 36).forEach((a) => cms.store.upsertArticle(later(a, 5, { status: 'archived' })));
    clock.set(at(10));
    const { result, requests } = await requestsDuring(() => run('incremental'));
    expect(result.status).toBe('succeeded');
    const adds = documentPosts(requests);
    const deletes = deletePosts(requests);
    for (const r of [...adds, ...deletes]) expect((r.body as unknown[]).length).toBeLessThanOrEqual(BATCH);
    expect(adds.flatMap((r) => r.body as unknown[])).toHaveLength(17);
    expect(deletes.flatMap((r) => r.body as unknown[])).toHaveLength(16);
    expect(adds).toHaveLength(Math.ceil(17 / BATCH));
    expect(deletes).toHaveLength(Math.ceil(16 / BATCH));
    expectIndexesMatchSnapshot();
  });

  it('updates section_name in the index when a section is renamed', async () => {
    expect((await run('full')).status).toBe('succeeded');
    cms.store.upsertSection('en', { ...sections.en[0]!, name: 'Fibre Sources', updated_at: at(5) });
    clock.set(at(10));
    expect((await run('incremental')).status).toBe('succeeded');
    const names = new Set(fake.documents(meili.uid('en')).filter((d) => d['section_slug'] === 'fiber').map((d) => d['section_name']));
    expect([...names]).toEqual(['Fibre Sources']);
  });
});

describe('tasks', () => {
  it('awaits every task it enqueues before the run ends', async () => {
    for (const [i, kind] of (['full', 'incremental', 'full'] as const).entries()) {
      clock.set(at((i + 1) * 10));
      cms.store.upsertArticle(later(enArticles[4]!, (i + 1) * 10 - 5, { title: `Touched ${kind}` }));
      expect((await run(kind)).status).toBe('succeeded');
      expect(unfinished(), `after ${kind}`).toEqual([]);
      expect(fake.tasks().filter((t) => t.status !== 'succeeded')).toEqual([]);
      expect(indexedTitle('en', 'en-4')).toBe(`Touched ${kind}`);
    }
  });

  it('deletes the finished tasks of earlier runs, so the task list does not grow from run to run', async () => {
    // A task of somebody else's index must survive the clean-up.
    const foreign = await meili.client.createIndex('someone_else', { primaryKey: 'id' }).waitTask();
    const counts: number[] = [];
    for (let i = 0; i < 6; i++) {
      clock.set(at((i + 1) * 10));
      cms.store.upsertArticle(later(enArticles[i]!, (i + 1) * 10 - 5, { title: `Round ${i}` }));
      const firstUid = Math.max(-1, ...fake.tasks().map((t) => t.uid)) + 1;
      expect((await run(i % 2 === 0 ? 'full' : 'incremental')).status).toBe('succeeded');
      const ours = fake.tasks().filter((t) => t.uid !== foreign.uid);
      if (i > 0) {
        // Only this run's own tasks are left (the next run deletes them).
        expect(ours.filter((t) => t.uid < firstUid).map((t) => `${t.uid} ${t.type} ${t.indexUid}`)).toEqual([]);
      }
      counts.push(ours.length);
    }
    expect(fake.tasks().map((t) => t.uid)).toContain(foreign.uid);
    // Full runs leave as many tasks as each other, and so do incremental ones.
    expect(counts[4]).toBe(counts[2]);
    expect(counts[5]).toBe(counts[3]);
  });
});

describe('failures', () => {
  it('fails a rebuild on a failed Meilisearch task with a one-line reason, keeps the live index (with the sync\'s changes), and the next incremental run rebuilds it', async () => {
    expect((await run('full')).status).toBe('succeeded');
    cms.store.upsertArticle(later(zhArticles[2]!, 5, { title: '新标题' }));
    clock.set(at(10));
    setWorkerState(worker.db, REBUILD_FLAG, 'pending', T0);
    onFirstRequest(
      (r) => r.method === 'POST' && r.path === `/indexes/${meili.uid('zh')}_next/documents`,
      () => fake.failNextTask({ code: 'internal', message: 'Injected failure of a document task.' }),
    );

    const failed = await run('full');
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/Meilisearch/);
    expect(failed.error).not.toContain('\n');
    expect(failed.error).toMatch(/Injected failure/);
    expect(failed.error).not.toContain(MASTER_KEY);
    // The live zh index took the sync's change before the rebuild began, and still serves.
    expect(indexedTitle('zh', 'zh-2')).toBe('新标题');
    expect(indexedIds('zh')).toEqual(snapshotIds('zh'));
    expect(query(dbPath, `SELECT title FROM articles WHERE slug = 'zh-2'`)).toEqual([{ title: '新标题' }]);
    expect(getWorkerState(worker.db, REBUILD_FLAG)).toBeDefined();

    clock.set(at(20));
    const { result, requests } = await requestsDuring(() => run('incremental'));
    expect(result).toMatchObject({ kind: 'incremental', status: 'succeeded' });
    expect(swaps(requests)).toHaveLength(2);
    expectIndexesMatchSnapshot();
    expect(indexedTitle('zh', 'zh-2')).toBe('新标题');
    expect(getWorkerState(worker.db, REBUILD_FLAG)).toBeUndefined();
  });

  it('fails a rebuild when Meilisearch goes down half-way, keeps the live index, and the next run repairs it', async () => {
    expect((await run('full')).status).toBe('succeeded');
    cms.store.upsertArticle(later(zhArticles[0]!, 5, { title: '停机期间的标题' }));
    clock.set(at(10));
    setWorkerState(worker.db, REBUILD_FLAG, 'pending', T0);
    onFirstRequest(
      (r) => r.method === 'POST' && r.path === `/indexes/${meili.uid('zh')}_next/documents`,
      () => void fake.setDown(true),
    );

    const unhandled = await unhandledRejectionsDuring(async () => {
      const failed = await run('full');
      expect(failed.status).toBe('failed');
      expect(failed.error).toMatch(/Meilisearch/);
      expect(failed.error).not.toContain('\n');
    });
    expect(unhandled).toEqual([]);
    expect(getWorkerState(worker.db, REBUILD_FLAG)).toBeDefined();

    await fake.setDown(false);
    await fake.idle();
    expect(indexedIds('zh')).toEqual(snapshotIds('zh'));
    clock.set(at(20));
    expect((await run('incremental')).status).toBe('succeeded');
    expectIndexesMatchSnapshot();
    expect(indexedTitle('zh', 'zh-0')).toBe('停机期间的标题');
    expect(getWorkerState(worker.db, REBUILD_FLAG)).toBeUndefined();
    expect(worker.logs.join('\n')).not.toContain(MASTER_KEY);
  });

  it('fails an incremental sync on a failed document task (checked, although the client does not throw), and the next run rebuilds', async () => {
    expect((await run('full')).status).toBe('succeeded');
    cms.store.upsertArticle(later(enArticles[6]!, 5, { title: 'Lost in a failed task' }));
    clock.set(at(10));
    onFirstRequest(
      (r) => r.method === 'POST' && r.path === `/indexes/${meili.uid('en')}/documents`,
      () => fake.failNextTask({ code: 'internal', message: 'Injected failure of an update task.' }),
    );
    const failed = await run('incremental');
    expect(failed).toMatchObject({ kind: 'incremental', status: 'failed' });
    expect(failed.error).toMatch(/Meilisearch task .*failed.*Injected failure of an update task/);
    expect(failed.error).not.toContain('\n');
    expect(indexedTitle('en', 'en-6')).not.toBe('Lost in a failed task');
    expect(getWorkerState(worker.db, REBUILD_FLAG)).toBeDefined();

    clock.set(at(20));
    const { result, requests } = await requestsDuring(() => run('incremental'));
    expect(result.status).toBe('succeeded');
    expect(swaps(requests)).toHaveLength(2);
    expect(indexedTitle('en', 'en-6')).toBe('Lost in a failed task');
    expect(getWorkerState(worker.db, REBUILD_FLAG)).toBeUndefined();
  });

  it('fails an incremental sync when Meilisearch is down, and the next incremental run rebuilds the index', async () => {
    expect((await run('full')).status).toBe('succeeded');
    // More changes than one batch: several requests, all of which fail.
    enArticles.slice(10, 30).forEach((a) => cms.store.upsertArticle(later(a, 5, { title: `Written while Meilisearch was down ${a.slug}` })));
    clock.set(at(10));
    await fake.setDown(true);
    const unhandled = await unhandledRejectionsDuring(async () => {
      const failed = await run('incremental');
      expect(failed.status).toBe('failed');
      expect(failed.error).toMatch(/Meilisearch/);
      expect(failed.error).not.toContain('\n');
    });
    expect(unhandled).toEqual([]);
    expect(getWorkerState(worker.db, REBUILD_FLAG)).toBeDefined();

    await fake.setDown(false);
    clock.set(at(20));
    // Nothing changed in the CMS since: only the rebuild can bring the change along.
    const { result, requests } = await requestsDuring(() => run('incremental'));
    expect(result.status).toBe('succeeded');
    expect(swaps(requests)).toHaveLength(2);
    expect(indexedTitle('en', 'en-12')).toBe('Written while Meilisearch was down en-12');
    expectIndexesMatchSnapshot();
    expect(getWorkerState(worker.db, REBUILD_FLAG)).toBeUndefined();
  });
});

describe('a wrong MEILI_API_KEY', () => {
  it('fails the run with a reason the operator can act on, without the key in it or in the logs', async () => {
    const wrongKey = 'wrong-key-0a1b2c3d';
    const misconfigured = meiliFixture({ host: fake.url, apiKey: wrongKey }, { prefix: meili.prefix }).indexer({ logger: worker.logger });
    const failed = await run('full', { indexer: misconfigured });
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/Meilisearch answered 403 \(invalid_api_key\)/);
    expect(failed.error).not.toContain('\n');
    const everything = [failed.error, ...worker.logs].join('\n');
    expect(everything).not.toContain(wrongKey);
    expect(everything).not.toContain(MASTER_KEY);
    expect(getWorkerState(worker.db, REBUILD_FLAG)).toBeDefined();
  });
});

describe('reindex', () => {
  it('rebuilds the indexes from the snapshot without calling the CMS, and clears the rebuild flag', async () => {
    expect((await run('full')).status).toBe('succeeded');
    // An index that lost its documents, and a flag left by an earlier failure.
    expect((await meili.client.index(meili.uid('en')).deleteAllDocuments().waitTask()).status).toBe('succeeded');
    setWorkerState(worker.db, REBUILD_FLAG, 'pending', T0);
    cms.requests.length = 0;

    const { result, requests } = await requestsDuring(() => run('reindex', { cms: undefined }));
    expect(result).toMatchObject({ kind: 'reindex', status: 'succeeded' });
    expect(cms.requests).toEqual([]);
    expect(swaps(requests)).toHaveLength(2);
    expectIndexesMatchSnapshot();
    expect(getWorkerState(worker.db, REBUILD_FLAG)).toBeUndefined();
  });
});
