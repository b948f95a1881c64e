import { afterEach, describe, expect, it } from 'vitest';
import { getWorkerState } from '../../../src/db/snapshot/sync-runs.js';
import type { Locale } from '../../../src/locale.js';
import { documentBatches } from '../../../src/search/meilisearch/batches.js';
import { bodyParts } from '../../../src/search/meilisearch/documents.js';
import { tokenize } from '../../fakes/meilisearch/search/tokenize.js';
import { meiliQueryText } from '../../../src/search/meilisearch/query.js';
import { normalizeQuery } from '../../../src/search/normalize.js';
import type { MeilisearchIndexer } from '../../../src/search/meilisearch/indexer.js';
import { readUnsynced } from '../../../src/search/meilisearch/unsynced.js';
import { addKey, memoryLogger, startApi, testClock } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { startFakeMeilisearch, type FakeMeilisearch, type FakeMeilisearchOptions, type RequestLogEntry } from '../../fakes/fake-meilisearch.js';
import { meiliFixture, testIndexConfig, type MeiliFixture } from '../../support/meili-fixture.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import { query, startWorker, type TestWorker } from '../../support/worker.js';

/*
 * What the worker does about the server it finds: its version (payloads it accepts, or a
 * refusal), a live index that is missing or has default settings, a payload size limit, slow
 * tasks; and what it leaves for the API when an update fails.
 */

const T0 = '2026-11-01T12:00:00Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString().replace('.000Z', 'Z');
const MASTER_KEY = 'repair-master-key-5e1d';
const REBUILD_FLAG = 'search_rebuild_needed';

interface Setup {
  fake: FakeMeilisearch;
  meili: MeiliFixture;
  indexer: MeilisearchIndexer;
  worker: TestWorker;
  cms: TestCms;
  dbPath: string;
  clock: ReturnType<typeof testClock>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(
  options: {
    fake?: FakeMeilisearchOptions;
    config?: Parameters<typeof testIndexConfig>[0];
    articles?: ReturnType<typeof rawArticle>[];
    pageSize?: number;
  } = {},
): Promise<Setup> {
  const dir = tempDir('meili-repair-');
  cleanups.push(() => dir.cleanup());
  const dbPath = dir.path('snapshot.db');
  const cms = await startTestCms();
  cleanups.push(() => cms.close());
  cms.store.upsertSection('en', rawSection({ slug: 'fiber', name: 'Fiber', position: 1 }));
  cms.store.upsertSection('zh', rawSection({ slug: 'fiber', name: '光纤', position: 1 }));
  cms.store.upsertArticles(options.articles ?? DEFAULT_ARTICLES);
  const fake = await startFakeMeilisearch({ masterKey: MASTER_KEY, taskDelayMs: 1, ...options.fake });
  cleanups.push(() => fake.close());
  const meili = meiliFixture({ host: fake.url, apiKey: MASTER_KEY }, { label: 'repair' });
  const clock = testClock(T0);
  const worker = startWorker({ databasePath: dbPath, cmsUrl: cms.url, clock, pageSize: options.pageSize ?? 20, maxResponseBytes: 8 << 20 });
  cleanups.push(() => worker.close());
  const indexer = meili.indexer({ timeoutMs: 2_000, logger: worker.logger, config: testIndexConfig({ taskTimeoutMs: 10_000, ...options.config }) });
  return { fake, meili, indexer, worker, cms, dbPath, clock };
}

const run = (s: Setup, kind: 'full' | 'incremental') => s.worker.run(kind, { indexer: s.indexer });

async function requestsDuring<T>(fake: FakeMeilisearch, fn: () => Promise<T>): Promise<{ result: T; requests: RequestLogEntry[] }> {
  const from = fake.requests.length;
  const result = await fn();
  return { result, requests: fake.requests.slice(from) };
}

const swapBodies = (requests: RequestLogEntry[]) => requests.filter((r) => r.path === '/swap-indexes').map((r) => r.body);
const writes = (requests: RequestLogEntry[]) => requests.filter((r) => r.method !== 'GET');
const snapshotIds = (s: Setup, locale: Locale) => query<{ id: number }>(s.dbPath, 'SELECT id FROM articles WHERE locale = ? ORDER BY id', locale).map((r) => r.id);
const indexedIds = (s: Setup, locale: Locale) => s.fake.documents(s.meili.uid(locale)).map((d) => Number(d['id'])).sort((a, b) => a - b);
const EN_ARTICLES = Array.from({ length: 6 }, (_, i) => rawArticle({ slug: `en-${i}`, title: `Xenon report ${i}`, section_slug: 'fiber', published_at: at(-100 - i) }));
const DEFAULT_ARTICLES = [...EN_ARTICLES, rawArticle({ locale: 'zh', slug: 'zh-0', title: '光纤激光器出口增长', section_slug: 'fiber', published_at: at(-100) })];
const WANTED_FILTERABLE = ['id', 'published_at_ts', 'section_slug'];

function expectInStep(s: Setup): void {
  for (const locale of ['en', 'zh'] as const) {
    expect(indexedIds(s, locale)).toEqual(snapshotIds(s, locale));
    expect([...s.fake.settings(s.meili.uid(locale)).filterableAttributes].sort()).toEqual(WANTED_FILTERABLE);
  }
}

describe('the server version', () => {
  it('on 1.17 swaps with `{ indexes }` alone, creating the first live index just for the swap', async () => {
    const s = await setup({ fake: { version: '1.17.1' } });
    const first = await requestsDuring(s.fake, () => run(s, 'full'));
    expect(first.result).toMatchObject({ status: 'succeeded', error: null });
    expect(first.requests[0]).toMatchObject({ method: 'GET', path: '/version' });
    expect(swapBodies(first.requests)).toEqual([[{ indexes: [s.meili.uid('en'), `${s.meili.uid('en')}_next`] }], [{ indexes: [s.meili.uid('zh'), `${s.meili.uid('zh')}_next`] }]]);
    expectInStep(s);
    const second = await requestsDuring(s.fake, () => run(s, 'full'));
    expect(second.result.status).toBe('succeeded');
    expect(JSON.stringify(swapBodies(second.requests))).not.toContain('rename');
    expect(s.fake.tasks().filter((t) => t.status === 'failed')).toEqual([]);
  });

  it('from 1.18 renames the first full index into place: no empty live index ever exists', async () => {
    const s = await setup({ fake: { version: '1.18.0' } });
    const { result, requests } = await requestsDuring(s.fake, () => run(s, 'full'));
    expect(result.status).toBe('succeeded');
    const live = s.meili.uid('en');
    expect(swapBodies(requests)[0]).toEqual([{ indexes: [`${live}_next`, live], rename: true }]);
    expect(requests.some((r) => r.method === 'POST' && r.path === '/indexes' && (r.body as { uid?: string }).uid === live)).toBe(false);
    expectInStep(s);
  });

  it('refuses a server older than 1.16 with a clear reason, before writing anything', async () => {
    const s = await setup({ fake: { version: '1.15.2' } });
    const { result, requests } = await requestsDuring(s.fake, () => run(s, 'full'));
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(/Meilisearch 1\.15\.2 is older than 1\.16\.0, the oldest version this service supports: upgrade Meilisearch/);
    expect(writes(requests)).toEqual([]);
    expect(s.fake.indexUids()).toEqual([]);
    expect(getWorkerState(s.worker.db, REBUILD_FLAG)).toBeDefined();
  });
});

describe('the server version, seen by the API', () => {
  it('refuses a server older than 1.16: search answers 503, /health and the log say why', async () => {
    const s = await setup({ fake: { version: '1.15.2' } });
    const logs = memoryLogger('info');
    const engine = s.meili.engine({ logger: logs.logger });
    await engine.verifyServer();
    expect(logs.lines.join('\n')).toMatch(/Meilisearch 1\.15\.2 is older than 1\.16\.0/);
    const key = addKey(s.dbPath).key;
    // The snapshot needs content for search to reach the engine.
    await s.worker.run('full');
    const api = await startApi({ databasePath: s.dbPath, clock: s.clock, engine });
    cleanups.push(() => api.close());
    const res = await api.request.get('/api/v1/search').query({ q: 'xenon' }).set('X-API-Key', key);
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('service_unavailable');
    const health = await api.request.get('/health');
    expect(health.body.search).toMatchObject({ status: 'unavailable' });
    expect(health.body.search.detail).toMatch(/older than 1\.16\.0/);
    expect(s.fake.requests.filter((r) => r.path.endsWith('/search'))).toEqual([]);
  });
});

describe('a live index that is missing or has no settings', () => {
  it('is rebuilt by an incremental sync after Meilisearch lost it, instead of being recreated empty', async () => {
    const s = await setup();
    expect((await run(s, 'full')).status).toBe('succeeded');
    expect((await s.meili.client.deleteIndex(s.meili.uid('en')).waitTask()).status).toBe('succeeded');
    s.cms.store.upsertArticle(rawArticle({ slug: 'en-new', title: 'Xenon newcomer', section_slug: 'fiber', published_at: at(-5), updated_at: at(5) }));
    s.clock.set(at(10));
    const { result, requests } = await requestsDuring(s.fake, () => run(s, 'incremental'));
    expect(result).toMatchObject({ kind: 'incremental', status: 'succeeded' });
    // The lost locale is rebuilt (and renamed into place); the other one only takes its changes.
    expect(swapBodies(requests)).toHaveLength(1);
    expectInStep(s);
    expect(s.worker.logs.join('\n')).toMatch(/search index \S+_en does not exist: rebuilding it from the snapshot/);
  });

  it('is rebuilt when a document upload created it with default settings (nothing filterable)', async () => {
    const s = await setup();
    expect((await run(s, 'full')).status).toBe('succeeded');
    const live = s.meili.uid('en');
    expect((await s.meili.client.deleteIndex(live).waitTask()).status).toBe('succeeded');
    expect((await s.meili.client.index(live).addDocuments([{ id: 999_999, title: 'orphan' }]).waitTask()).status).toBe('succeeded');
    expect(s.fake.settings(live).filterableAttributes).toEqual([]);

    // The API reports it and answers 503 on search, naming the repair.
    const key = addKey(s.dbPath).key;
    const api = await startApi({ databasePath: s.dbPath, clock: s.clock, engine: s.meili.engine() });
    cleanups.push(() => api.close());
    const health = await api.request.get('/health');
    expect(health.body.search).toMatchObject({ status: 'unavailable', indexes: { en: { status: 'unconfigured' }, zh: { status: 'ok' } } });
    expect(health.body.search.detail).toMatch(/has not got its settings: the sync worker rebuilds it on its next run/);
    expect((await api.request.get('/api/v1/search').query({ q: 'xenon' }).set('X-API-Key', key)).status).toBe(503);

    s.clock.set(at(10));
    const { result } = await requestsDuring(s.fake, () => run(s, 'incremental'));
    expect(result.status).toBe('succeeded');
    expectInStep(s);
    expect(indexedIds(s, 'en')).not.toContain(999_999);
    const after = await api.request.get('/api/v1/search').query({ q: 'xenon' }).set('X-API-Key', key);
    expect(after.status).toBe(200);
    expect(after.body.meta.total).toBe(6);
    expect((await api.request.get('/health')).body.search).toMatchObject({ status: 'ok', indexes: { en: { status: 'ok', documents: 6 } } });
  });

  it.each([
    ['typoTolerance', { typoTolerance: { minWordSizeForTypos: { oneTypo: 3, twoTypos: 9 } } }],
    ['localizedAttributes', { localizedAttributes: [{ attributePatterns: ['*'], locales: ['jpn'] }] }],
    ['displayedAttributes', { displayedAttributes: ['*'] }],
  ])('is rebuilt by the next incremental sync when its %s differ from meilisearch.config.json', async (_name, changed) => {
    const s = await setup();
    expect((await run(s, 'full')).status).toBe('succeeded');
    expect((await s.meili.client.index(s.meili.uid('en')).updateSettings(changed).waitTask()).status).toBe('succeeded');
    s.clock.set(at(10));
    const { result, requests } = await requestsDuring(s.fake, () => run(s, 'incremental'));
    expect(result.status).toBe('succeeded');
    expect(swapBodies(requests)).toHaveLength(1);
    expect(s.worker.logs.join('\n')).toMatch(/\S+_en does not have the settings of meilisearch.config.json/);
  });

  it('is reported missing by /health before any sync has built it', async () => {
    const s = await setup();
    const api = await startApi({ databasePath: s.dbPath, clock: s.clock, engine: s.meili.engine() });
    cleanups.push(() => api.close());
    const health = await api.request.get('/health');
    expect(health.body.search).toMatchObject({
      engine: 'meilisearch',
      status: 'unavailable',
      version: '1.19.0',
      indexes: { en: { uid: s.meili.uid('en'), status: 'missing', documents: null }, zh: { status: 'missing' } },
    });
    expect(health.body.search.detail).toMatch(/does not exist: the sync worker rebuilds it/);
  });
});

describe('upload size and task waits', () => {
  const bulky = Array.from({ length: 6 }, (_, i) =>
    rawArticle({ slug: `bulky-${i}`, title: `Bulky ${i}`, section_slug: 'fiber', published_at: at(-10 - i), body_markdown: `${'Long body text. '.repeat(25_000)}${i}` }),
  );

  it('caps every upload by serialized bytes, so none reaches the payload limit', async () => {
    const s = await setup({ articles: bulky, pageSize: 2, fake: { payloadLimitBytes: 1_048_576 }, config: { batchSize: 1000, batchBytes: 1_000_000 } });
    const { result, requests } = await requestsDuring(s.fake, () => run(s, 'full'));
    expect(result).toMatchObject({ status: 'succeeded', error: null });
    const uploads = requests.filter((r) => r.method === 'POST' && r.path.endsWith('/documents'));
    expect(uploads.length).toBeGreaterThanOrEqual(3);
    for (const u of uploads) expect(Buffer.byteLength(JSON.stringify(u.body))).toBeLessThanOrEqual(1_000_000);
    expectInStep(s);
  });

  it('fails the run with the engine\'s payload_too_large reason when the server allows less than the batches', async () => {
    const s = await setup({ articles: bulky, pageSize: 2, fake: { payloadLimitBytes: 500_000 }, config: { batchBytes: 1_000_000 } });
    const result = await run(s, 'full');
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(/Meilisearch answered 413 \(payload_too_large\)/);
    expect(result.error).not.toContain('\n');
  });

  it('names MeilisearchTaskTimeOutError when a task outlasts its wait, and the next run rebuilds', async () => {
    const s = await setup({ fake: { taskDelayMs: 1_500 }, config: { taskTimeoutMs: 200, taskTimeoutMsPerMb: 0 } });
    const result = await run(s, 'full');
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(/Meilisearch task \d+ \(.+\) was still not finished after \d+ ms \(MeilisearchTaskTimeOutError\)/);
    expect(getWorkerState(s.worker.db, REBUILD_FLAG)).toBeDefined();
  });

  it('cuts a long body into parts that each stay under the engine\'s 65,536 positions (as the fake counts them)', () => {
    // 100,000 words, every fourth one after a full stop (8 positions), Chinese mixed in.
    const body = Array.from({ length: 25_000 }, (_, i) => `alpha beta 激光器 gamma${i % 10 === 0 ? '5G' : ''}.`).join(' ');
    const parts = bodyParts(body);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.join('')).toBe(body);
    for (const part of parts) {
      const last = tokenize(part).at(-1)!;
      expect(last.position).toBeLessThan(65_536);
    }
    expect(bodyParts('short body')).toEqual(['short body']);
  });

  it('groups documents by count and by bytes, a document larger than the cap alone', () => {
    const doc = (id: number, size: number) => ({ id, slug: `s${id}`, title: '', excerpt: '', body: 'x'.repeat(size), section_slug: null, section_name: '', author: '', published_at_ts: null, h: '' });
    const batches = [...documentBatches([doc(1, 10), doc(2, 10), doc(3, 5_000), doc(4, 10), doc(5, 10), doc(6, 10)], 2, 1_000)];
    expect(batches.map((b) => b.count)).toEqual([2, 1, 2, 1]);
    for (const b of batches) {
      expect(b.bytes).toBe(Buffer.byteLength(b.json));
      expect(JSON.parse(b.json)).toHaveLength(b.count);
    }
    expect(batches.filter((b) => b.count > 1).every((b) => b.bytes <= 1_000)).toBe(true);
  });
});

describe('an update that failed', () => {
  it('leaves the ids it could not apply for the API, which leaves them out of the one search it sends; the rebuild clears them', async () => {
    const s = await setup();
    expect((await run(s, 'full')).status).toBe('succeeded');
    const changedId = query<{ id: number }>(s.dbPath, `SELECT id FROM articles WHERE slug = 'en-1'`)[0]!.id;
    // Unpublished in the CMS: the snapshot drops it, the index keeps it when the update fails.
    s.cms.store.upsertArticle({ ...EN_ARTICLES[1]!, status: 'archived', updated_at: at(5) });
    s.clock.set(at(10));
    // The deletion's task fails once Meilisearch has accepted it.
    const log = s.fake.requests;
    const push = log.push.bind(log);
    log.push = (...entries: RequestLogEntry[]) => {
      if (entries.some((e) => e.path.endsWith('/documents/delete-batch'))) s.fake.failNextTask({ code: 'internal', message: 'Injected failure.' });
      return push(...entries);
    };
    const failed = await requestsDuring(s.fake, () => run(s, 'incremental'));
    log.push = push;
    expect(failed.result.status, JSON.stringify(failed.requests.map((r) => `${r.method} ${r.path}`))).toBe('failed');
    expect(failed.result.error).toMatch(/Injected failure/);
    expect(indexedIds(s, 'en')).toContain(changedId);
    expect(readUnsynced(s.worker.db, 'en')).toEqual([changedId]);

    const key = addKey(s.dbPath).key;
    const api = await startApi({ databasePath: s.dbPath, clock: s.clock, engine: s.meili.engine() });
    cleanups.push(() => api.close());
    await api.request.get('/api/v1/search').query({ q: 'xenon' }).set('X-API-Key', key); // reads the version once
    const { result: res, requests } = await requestsDuring(s.fake, () =>
      api.request.get('/api/v1/search').query({ q: 'xenon', limit: 5 }).set('X-API-Key', key),
    );
    expect(res.status).toBe(200);
    expect(requests).toHaveLength(1);
    expect((requests[0]!.body as { filter: string[] }).filter).toContain(`id NOT IN [${changedId}]`);
    expect(res.body.data).toHaveLength(5);
    expect(res.body.meta).toMatchObject({ total: 5, pages: 1 });

    s.clock.set(at(20));
    expect((await run(s, 'incremental')).status).toBe('succeeded');
    expect(readUnsynced(s.worker.db, 'en')).toEqual([]);
    expectInStep(s);
  });
});

describe('the q sent to Meilisearch', () => {
  it('keeps Chinese words written together, so that jieba cuts the query as it cut the documents', () => {
    const text = (q: string) => meiliQueryText(q, normalizeQuery(q));
    expect(text('飞秒')).toBe('飞秒');
    expect(text('激光设备')).toBe('激光设备');
    expect(text('激光 设备')).toBe('激光 设备');
    expect(text('-laser "cutting" 激光')).toBe('laser cutting 激光');
    expect(text('laser laser cutting')).toBe('laser cutting');
    // Never empty when there are words: an empty q is Meilisearch's placeholder search.
    for (const q of ['-- laser', '"x" ab', '激光激光']) expect(text(q)).not.toBe('');
  });
});
