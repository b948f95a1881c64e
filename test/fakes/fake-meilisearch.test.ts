import {
  Meilisearch,
  MeilisearchApiError,
  MeilisearchError,
  MeilisearchRequestError,
  MeilisearchRequestTimeOutError,
  MeilisearchTaskTimeOutError,
  type Task,
} from 'meilisearch';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeMeilisearch, type FakeMeilisearch } from './fake-meilisearch.js';

const KEY = 'test-master-key';
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

let meili: FakeMeilisearch;
let client: Meilisearch;
const extra: FakeMeilisearch[] = [];

async function startExtra(options: Parameters<typeof startFakeMeilisearch>[0]): Promise<FakeMeilisearch> {
  const fake = await startFakeMeilisearch(options);
  extra.push(fake);
  return fake;
}

beforeEach(async () => {
  meili = await startFakeMeilisearch({ masterKey: KEY });
  client = new Meilisearch({ host: meili.url, apiKey: KEY });
});

afterEach(async () => {
  await meili.close();
  await Promise.all(extra.splice(0).map((f) => f.close()));
});

/** Runs `fn`, expecting it to reject, and returns what it threw. */
async function thrown(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection, got a resolution');
}

async function apiError(fn: () => Promise<unknown>): Promise<MeilisearchApiError> {
  const err = await thrown(fn);
  expect(err).toBeInstanceOf(MeilisearchApiError);
  return err as MeilisearchApiError;
}

interface Article extends Record<string, unknown> {
  id: string;
  title: string;
  body?: string;
  section?: string;
  published_at_ts?: number;
}

async function seed(uid: string, docs: Record<string, unknown>[], settings?: Parameters<ReturnType<Meilisearch['index']>['updateSettings']>[0]): Promise<void> {
  expect((await client.createIndex(uid, { primaryKey: 'id' }).waitTask()).status).toBe('succeeded');
  if (settings) expect((await client.index(uid).updateSettings(settings).waitTask()).status).toBe('succeeded');
  if (docs.length > 0) expect((await client.index(uid).addDocuments(docs).waitTask()).status).toBe('succeeded');
}

const ids = (hits: Record<string, unknown>[]): unknown[] => hits.map((h) => h['id']);

describe('health, version and indexes', () => {
  it('answers health without a key and version with one', async () => {
    const anonymous = new Meilisearch({ host: meili.url });
    expect(await anonymous.health()).toEqual({ status: 'available' });
    expect(await anonymous.isHealthy()).toBe(true);
    const version = await client.getVersion();
    expect(version.pkgVersion).toMatch(/^1\.\d+\.\d+$/);
  });

  it('createIndex answers a summarized enqueued task and waitTask resolves with the full succeeded task', async () => {
    const promise = client.createIndex('articles', { primaryKey: 'id' });
    const enqueued = await promise;
    expect(enqueued).toEqual({ taskUid: 0, indexUid: 'articles', status: 'enqueued', type: 'indexCreation', enqueuedAt: expect.stringMatching(RFC3339) });
    const task = await promise.waitTask();
    expect(task).toMatchObject({
      uid: 0,
      batchUid: expect.any(Number),
      indexUid: 'articles',
      status: 'succeeded',
      type: 'indexCreation',
      canceledBy: null,
      details: { primaryKey: 'id' },
      error: null,
      duration: expect.stringMatching(/^PT\d+(\.\d+)?S$/),
    });
    for (const field of ['enqueuedAt', 'startedAt', 'finishedAt'] as const) expect(task[field]).toMatch(RFC3339);
    expect(Date.parse(task.startedAt as string)).toBeGreaterThanOrEqual(Date.parse(task.enqueuedAt));
    expect(Date.parse(task.finishedAt as string)).toBeGreaterThanOrEqual(Date.parse(task.startedAt as string));

    const index = await client.getIndex('articles');
    expect(index.uid).toBe('articles');
    expect(index.primaryKey).toBe('id');
    const raw = await client.getRawIndex('articles');
    expect(Object.keys(raw)).toEqual(['uid', 'createdAt', 'updatedAt', 'primaryKey']);
    expect((await client.getIndexes()).results.map((i) => i.uid)).toEqual(['articles']);
    expect(meili.indexUids()).toEqual(['articles']);
  });

  it('creating an existing index succeeds over HTTP and waitTask resolves (does not throw) with a failed task', async () => {
    await client.createIndex('articles').waitTask();
    const enqueued = await client.createIndex('articles');
    expect(enqueued.status).toBe('enqueued');
    const task = await client.tasks.waitForTask(enqueued.taskUid);
    expect(task.status).toBe('failed');
    expect(task.error).toEqual({
      message: 'Index `articles` already exists.',
      code: 'index_already_exists',
      type: 'invalid_request',
      link: 'https://docs.meilisearch.com/errors#index_already_exists',
    });
  });

  it('a task goes enqueued -> processing -> succeeded, one at a time in uid order', async () => {
    // Long enough that a busy machine still sees the first task enqueued.
    const slow = await startExtra({ taskDelayMs: 400 });
    const c = new Meilisearch({ host: slow.url });
    const first = await c.createIndex('a');
    const second = await c.createIndex('b');
    const seen: string[] = [];
    for (;;) {
      const [t1, t2] = await Promise.all([c.tasks.getTask(first.taskUid), c.tasks.getTask(second.taskUid)]);
      seen.push(`${t1.status}/${t2.status}`);
      if (t2.status === 'succeeded') break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const distinct = seen.filter((s, i) => s !== seen[i - 1]);
    expect(distinct).toEqual(['enqueued/enqueued', 'processing/enqueued', 'succeeded/enqueued', 'succeeded/processing', 'succeeded/succeeded']);
  });

  it('unknown index: getIndex and search throw 404 index_not_found', async () => {
    const err = await apiError(() => client.getIndex('nope'));
    expect(err.response.status).toBe(404);
    expect(err.cause).toMatchObject({ code: 'index_not_found', message: 'Index `nope` not found.', type: 'invalid_request' });
    const searchErr = await apiError(() => client.index('nope').search('x'));
    expect(searchErr.cause?.code).toBe('index_not_found');
  });

  it('deleteIndex is a task; deleting a missing index fails in the task, so deleteIndexIfExists cannot see it', async () => {
    await seed('articles', [{ id: '1', title: 'x' }]);
    const task = await client.deleteIndex('articles').waitTask();
    expect(task).toMatchObject({ status: 'succeeded', type: 'indexDeletion', details: { deletedDocuments: 1 } });
    expect(meili.indexUids()).toEqual([]);
    const missing = await client.deleteIndex('articles').waitTask();
    expect(missing.status).toBe('failed');
    expect(missing.error?.code).toBe('index_not_found');
    // The client's helper only catches an HTTP error, which never comes: it answers true.
    expect(await client.deleteIndexIfExists('never-existed')).toBe(true);
  });
});

describe('settings', () => {
  it('updateSettings is a task; the settings apply once it succeeds and round-trip with defaults filled in', async () => {
    const slow = await startExtra({ taskDelayMs: 150 });
    const c = new Meilisearch({ host: slow.url });
    await c.createIndex('articles', { primaryKey: 'id' }).waitTask();
    const pending = c.index('articles').updateSettings({
      searchableAttributes: ['title', 'body'],
      filterableAttributes: ['section', 'published_at_ts'],
      sortableAttributes: ['published_at_ts', 'author'],
      rankingRules: ['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness', 'published_at_ts:desc'],
      typoTolerance: { minWordSizeForTypos: { oneTypo: 4 } },
      localizedAttributes: [{ attributePatterns: ['title_zh', 'body_zh'], locales: ['cmn'] }],
      pagination: { maxTotalHits: 5000 },
      displayedAttributes: ['id', 'title'],
    });
    const enqueued = await pending;
    expect(enqueued.type).toBe('settingsUpdate');
    // Not applied while the task waits.
    expect((await c.index('articles').getSettings()).pagination).toEqual({ maxTotalHits: 1000 });
    const task = await pending.waitTask();
    expect(task.status).toBe('succeeded');
    expect(task.details?.pagination).toEqual({ maxTotalHits: 5000 });

    const settings = await c.index('articles').getSettings();
    expect(settings).toMatchObject({
      searchableAttributes: ['title', 'body'],
      filterableAttributes: ['section', 'published_at_ts'],
      // A set in the engine: answered sorted.
      sortableAttributes: ['author', 'published_at_ts'],
      rankingRules: ['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness', 'published_at_ts:desc'],
      typoTolerance: { enabled: true, minWordSizeForTypos: { oneTypo: 4, twoTypos: 9 }, disableOnWords: [], disableOnAttributes: [] },
      localizedAttributes: [{ attributePatterns: ['title_zh', 'body_zh'], locales: ['cmn'] }],
      pagination: { maxTotalHits: 5000 },
      displayedAttributes: ['id', 'title'],
      distinctAttribute: null,
    });
    expect(slow.settings('articles').pagination.maxTotalHits).toBe(5000);

    // A partial update merges; null resets to the default.
    await c.index('articles').updateSettings({ typoTolerance: { enabled: false }, pagination: null } as never).waitTask();
    const after = await c.index('articles').getSettings();
    expect(after.typoTolerance).toMatchObject({ enabled: false, minWordSizeForTypos: { oneTypo: 4, twoTypos: 9 } });
    expect(after.pagination).toEqual({ maxTotalHits: 1000 });
  });

  it('sub-setting routes and validation errors behave like the engine', async () => {
    await seed('articles', []);
    const index = client.index('articles');
    await index.updateFilterableAttributes(['section']).waitTask();
    expect(await index.getFilterableAttributes()).toEqual(['section']);
    await index.updatePagination({ maxTotalHits: 1500 }).waitTask();
    expect(await index.getPagination()).toEqual({ maxTotalHits: 1500 });
    const bad = await apiError(() => index.updateSettings({ rankingRules: ['words', 'bogus'] }));
    expect(bad.response.status).toBe(400);
    expect(bad.cause?.code).toBe('invalid_settings_ranking_rules');
    const unknown = await apiError(() => index.updateSettings({ notASetting: true } as never));
    expect(unknown.cause?.code).toBe('bad_request');
    const locale = await apiError(() => index.updateSettings({ localizedAttributes: [{ attributePatterns: ['x'], locales: ['chinese'] }] }));
    expect(locale.cause?.code).toBe('invalid_settings_localized_attributes');
  });

  it('settings on a missing index create it, like the engine', async () => {
    const task = await client.index('fresh').updateSettings({ filterableAttributes: ['a'] }).waitTask();
    expect(task.status).toBe('succeeded');
    expect(meili.indexUids()).toEqual(['fresh']);
    expect((await client.getIndex('fresh')).primaryKey).toBeNull();
  });
});

describe('documents', () => {
  it('addDocumentsInBatches enqueues one task per batch and stores every document', async () => {
    await client.createIndex('articles', { primaryKey: 'id' }).waitTask();
    const docs = Array.from({ length: 2500 }, (_, i) => ({ id: `a${i}`, title: `Article ${i}` }));
    const batches = client.index('articles').addDocumentsInBatches(docs, 1000);
    expect(batches).toHaveLength(3);
    const tasks = await client.tasks.waitForTasks(await Promise.all(batches));
    expect(tasks.map((t) => t.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(tasks.map((t) => t.details)).toEqual([
      { receivedDocuments: 1000, indexedDocuments: 1000 },
      { receivedDocuments: 1000, indexedDocuments: 1000 },
      { receivedDocuments: 500, indexedDocuments: 500 },
    ]);
    expect(meili.documents('articles')).toHaveLength(2500);
    expect(meili.documents('articles')[2499]).toEqual({ id: 'a2499', title: 'Article 2499' });
    const stats = await client.index('articles').getStats();
    expect(stats.numberOfDocuments).toBe(2500);
    expect(meili.requests.filter((r) => r.method === 'POST' && r.path === '/indexes/articles/documents')).toHaveLength(3);
  });

  it('adding to a missing index creates it with the primaryKey query parameter', async () => {
    const task = await client.index('auto').addDocuments([{ ref: 'x1', title: 't' }], { primaryKey: 'ref' }).waitTask();
    expect(task.status).toBe('succeeded');
    expect(meili.requests.find((r) => r.path === '/indexes/auto/documents')?.query).toEqual({ primaryKey: 'ref' });
    expect((await client.getIndex('auto')).primaryKey).toBe('ref');
  });

  it('a document without the primary key fails the whole task with missing_document_id', async () => {
    await seed('articles', []);
    const task = await client.index('articles').addDocuments([{ id: 'ok', title: 'a' }, { title: 'no id' }]).waitTask();
    expect(task.status).toBe('failed');
    expect(task.error?.code).toBe('missing_document_id');
    expect(task.details).toEqual({ receivedDocuments: 2, indexedDocuments: 0 });
    expect(meili.documents('articles')).toEqual([]);
  });

  it.each([
    ['a string with a space', 'not valid'],
    ['a string with a slash', 'a/b'],
    ['a 512-byte string', 'x'.repeat(512)],
    ['a float', 1.5],
    ['an object', { nested: 1 }],
  ])('an id that is %s fails with invalid_document_id', async (_label, id) => {
    await seed('articles', []);
    const task = await client.index('articles').addDocuments([{ id, title: 'x' }]).waitTask();
    expect(task.status).toBe('failed');
    expect(task.error?.code).toBe('invalid_document_id');
  });

  it('accepts integer ids and 511-byte [a-zA-Z0-9_-] ids', async () => {
    await seed('articles', []);
    const task = await client.index('articles').addDocuments([{ id: 42 }, { id: `${'x'.repeat(509)}-_` }]).waitTask();
    expect(task.status).toBe('succeeded');
    expect(meili.documents('articles')).toHaveLength(2);
  });

  it('addDocuments replaces whole documents, updateDocuments merges fields', async () => {
    await seed('articles', [{ id: '1', title: 'old', section: 's' }]);
    await client.index('articles').addDocuments([{ id: '1', title: 'new' }]).waitTask();
    expect(meili.documents('articles')).toEqual([{ id: '1', title: 'new' }]);
    await client.index('articles').updateDocuments([{ id: '1', section: 'lasers' }]).waitTask();
    expect(meili.documents('articles')).toEqual([{ id: '1', title: 'new', section: 'lasers' }]);
  });

  it('deleteDocuments posts the ids to delete-batch; deleteAllDocuments empties the index', async () => {
    await seed('articles', [{ id: '1' }, { id: '2' }, { id: '3' }]);
    const task = await client.index('articles').deleteDocuments(['1', '3', 'missing']).waitTask();
    expect(task).toMatchObject({ status: 'succeeded', type: 'documentDeletion', details: { providedIds: 3, deletedDocuments: 2 } });
    expect(meili.requests.find((r) => r.path === '/indexes/articles/documents/delete-batch')?.body).toEqual(['1', '3', 'missing']);
    expect(meili.documents('articles')).toEqual([{ id: '2' }]);
    const all = await client.index('articles').deleteAllDocuments().waitTask();
    expect(all).toMatchObject({ status: 'succeeded', type: 'documentDeletion', details: { deletedDocuments: 1 } });
    expect(meili.documents('articles')).toEqual([]);
    const gone = await client.index('gone').deleteDocuments(['1']).waitTask();
    expect(gone.error?.code).toBe('index_not_found');
  });

  it('malformed JSON bodies answer 400 (malformed_payload for documents, bad_request elsewhere)', async () => {
    await seed('articles', []);
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const docs = await fetch(`${meili.url}/indexes/articles/documents`, { method: 'POST', headers, body: '[{"id": 1,' });
    expect(docs.status).toBe(400);
    expect(await docs.json()).toMatchObject({ code: 'malformed_payload', type: 'invalid_request' });
    const search = await fetch(`${meili.url}/indexes/articles/search`, { method: 'POST', headers, body: '{"q": ' });
    expect(search.status).toBe(400);
    expect(await search.json()).toMatchObject({ code: 'bad_request' });
    // A byte body carries no Content-Type at all.
    const noType = await fetch(`${meili.url}/indexes/articles/documents`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body: new TextEncoder().encode('[]') });
    expect(noType.status).toBe(415);
    expect(((await noType.json()) as { code: string }).code).toBe('missing_content_type');
    const textType = await fetch(`${meili.url}/indexes/articles/documents`, { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body: '[]' });
    expect(textType.status).toBe(415);
    expect(((await textType.json()) as { code: string }).code).toBe('invalid_content_type');
  });
});

const SECTIONS = ['lasers', 'optics', 'industry'];
function corpus(n: number): Article[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `doc-${i}`,
    title: `Photonics report ${i}`,
    section: SECTIONS[i % 3] as string,
    published_at_ts: 1000 + i,
  }));
}

describe('search pagination', () => {
  it('page/hitsPerPage answers exact totals; offset/limit answers estimatedTotalHits', async () => {
    await seed('articles', corpus(45));
    const paged = await client.index('articles').search('', { page: 3, hitsPerPage: 20 });
    expect(Object.keys(paged)).toEqual(['hits', 'query', 'processingTimeMs', 'hitsPerPage', 'page', 'totalPages', 'totalHits']);
    expect(paged).toMatchObject({ query: '', hitsPerPage: 20, page: 3, totalPages: 3, totalHits: 45 });
    expect(ids(paged.hits)).toEqual(['doc-40', 'doc-41', 'doc-42', 'doc-43', 'doc-44']);

    const offset = await client.index('articles').search('report', { offset: 40, limit: 10 });
    expect(Object.keys(offset)).toEqual(['hits', 'query', 'processingTimeMs', 'limit', 'offset', 'estimatedTotalHits']);
    expect(offset).toMatchObject({ query: 'report', limit: 10, offset: 40, estimatedTotalHits: 45 });
    expect(offset.hits).toHaveLength(5);

    const beyond = await client.index('articles').search(null, { page: 9, hitsPerPage: 20 });
    expect(beyond.hits).toEqual([]);
    expect(beyond.totalHits).toBe(45);
    const zero = await client.index('articles').search(null, { hitsPerPage: 0 });
    expect(zero).toMatchObject({ hits: [], totalHits: 45, totalPages: 0, page: 1 });
  });

  it('caps counts at maxTotalHits (1000 by default) and lifts the cap once the setting is raised', async () => {
    await client.createIndex('articles', { primaryKey: 'id' }).waitTask();
    await client.tasks.waitForTasks(await Promise.all(client.index('articles').addDocumentsInBatches(corpus(1500), 500)));

    const capped = await client.index('articles').search('photonics', { page: 1, hitsPerPage: 20 });
    expect(capped).toMatchObject({ totalHits: 1000, totalPages: 50 });
    expect((await client.index('articles').search('', { page: 51, hitsPerPage: 20 })).hits).toEqual([]);
    const tail = await client.index('articles').search('', { offset: 990, limit: 20 });
    expect(tail).toMatchObject({ estimatedTotalHits: 1000, offset: 990, limit: 20 });
    expect(tail.hits).toHaveLength(10);

    await client.index('articles').updateSettings({ pagination: { maxTotalHits: 10000 } }).waitTask();
    const full = await client.index('articles').search('photonics', { page: 75, hitsPerPage: 20 });
    expect(full).toMatchObject({ totalHits: 1500, totalPages: 75 });
    expect(full.hits).toHaveLength(20);
  });
});

describe('search filters and sort', () => {
  beforeEach(async () => {
    await seed('articles', corpus(30), { filterableAttributes: ['section', 'published_at_ts', 'tags'], sortableAttributes: ['published_at_ts'] });
  });

  it('filters on a section and a numeric range, in string and array forms', async () => {
    const index = client.index('articles');
    const r1 = await index.search('', { filter: 'section = lasers AND published_at_ts 1003 TO 1012', limit: 50 });
    expect(ids(r1.hits)).toEqual(['doc-3', 'doc-6', 'doc-9', 'doc-12']);
    // Equality on strings ignores case; numbers compare numerically.
    const r2 = await index.search('', { filter: [['section = "OPTICS"', "section = 'industry'"], 'published_at_ts >= 1025'], limit: 50 });
    expect(ids(r2.hits)).toEqual(['doc-25', 'doc-26', 'doc-28', 'doc-29']);
    const r3 = await index.search('', { filter: 'section IN [optics, industry] AND NOT published_at_ts < 1027', limit: 50 });
    expect(ids(r3.hits)).toEqual(['doc-28', 'doc-29']);
    const r4 = await index.search('', { filter: 'section != lasers AND published_at_ts > 1026', limit: 50 });
    expect(ids(r4.hits)).toEqual(['doc-28', 'doc-29']);
    const r5 = await index.search('', { filter: 'tags EXISTS', limit: 50 });
    expect(r5.hits).toEqual([]);
    const r6 = await index.search('', { filter: '(section = lasers OR section = optics) AND published_at_ts <= 1001', limit: 50 });
    expect(ids(r6.hits)).toEqual(['doc-0', 'doc-1']);
  });

  it.each([
    ['a syntax error', 'section ='],
    ['an unknown operator', 'section ~ lasers'],
    ['a lowercase keyword', 'section = lasers and published_at_ts > 3'],
    ['a non-filterable attribute', 'title = report'],
  ])('an invalid filter (%s) makes the client throw MeilisearchApiError invalid_search_filter', async (_label, filter) => {
    const err = await apiError(() => client.index('articles').search('', { filter }));
    expect(err.response.status).toBe(400);
    expect(err.cause).toMatchObject({ code: 'invalid_search_filter', type: 'invalid_request', link: 'https://docs.meilisearch.com/errors#invalid_search_filter' });
  });

  it('sorts on a sortable attribute, and refuses a non-sortable one with invalid_search_sort', async () => {
    const desc = await client.index('articles').search('', { sort: ['published_at_ts:desc'], limit: 3 });
    expect(ids(desc.hits)).toEqual(['doc-29', 'doc-28', 'doc-27']);
    const asc = await client.index('articles').search('report', { sort: ['published_at_ts:asc'], limit: 2 });
    expect(ids(asc.hits)).toEqual(['doc-0', 'doc-1']);
    const err = await apiError(() => client.index('articles').search('', { sort: ['title:asc'] }));
    expect(err.response.status).toBe(400);
    expect(err.cause?.code).toBe('invalid_search_sort');
    const syntax = await apiError(() => client.index('articles').search('', { sort: ['published_at_ts'] }));
    expect(syntax.cause?.code).toBe('invalid_search_sort');
  });

  it('refuses the sort parameter when the sort ranking rule was removed', async () => {
    await client.index('articles').updateRankingRules(['words', 'typo', 'proximity', 'attribute', 'exactness']).waitTask();
    const err = await apiError(() => client.index('articles').search('', { sort: ['published_at_ts:desc'] }));
    expect(err.cause?.code).toBe('invalid_search_sort');
  });

  it('attributesToRetrieve limits the fields, within displayedAttributes', async () => {
    const r = await client.index('articles').search('', { attributesToRetrieve: ['id', 'section'], limit: 1 });
    expect(r.hits).toEqual([{ id: 'doc-0', section: 'lasers' }]);
    await client.index('articles').updateDisplayedAttributes(['id', 'title']).waitTask();
    const d = await client.index('articles').search('', { limit: 1 });
    expect(d.hits).toEqual([{ id: 'doc-0', title: 'Photonics report 0' }]);
    const both = await client.index('articles').search('', { attributesToRetrieve: ['id', 'section'], limit: 1 });
    expect(both.hits).toEqual([{ id: 'doc-0' }]);
  });

  it('facets count values of filterable attributes', async () => {
    const r = await client.index('articles').search('', { facets: ['section'], filter: 'published_at_ts < 1010' });
    expect(r.facetDistribution).toEqual({ section: { industry: 3, lasers: 4, optics: 3 } });
  });
});

describe('search matching and ranking', () => {
  it('ranks by the order of searchableAttributes', async () => {
    await seed(
      'articles',
      [
        { id: 'body-hit', title: 'Market news', body: 'a new fiber laser' },
        { id: 'title-hit', title: 'Fiber laser record', body: 'market news' },
      ],
      { searchableAttributes: ['title', 'body'] },
    );
    expect(ids((await client.index('articles').search('fiber laser')).hits)).toEqual(['title-hit', 'body-hit']);
    await client.index('articles').updateSearchableAttributes(['body', 'title']).waitTask();
    expect(ids((await client.index('articles').search('fiber laser')).hits)).toEqual(['body-hit', 'title-hit']);
  });

  it('a custom published_at_ts:desc rule orders otherwise equal documents; without it insertion order holds', async () => {
    const docs = [
      { id: 'old', title: 'Laser welding', published_at_ts: 100 },
      { id: 'new', title: 'Laser welding', published_at_ts: 300 },
      { id: 'mid', title: 'Laser welding', published_at_ts: 200 },
      { id: 'exact-other', title: 'Laser cutting', published_at_ts: 999 },
    ];
    await seed('articles', docs);
    expect(ids((await client.index('articles').search('laser welding')).hits)).toEqual(['old', 'new', 'mid', 'exact-other']);
    await client
      .index('articles')
      .updateRankingRules(['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness', 'published_at_ts:desc'])
      .waitTask();
    // words still comes first: the document missing "welding" stays last despite its date.
    expect(ids((await client.index('articles').search('laser welding')).hits)).toEqual(['new', 'mid', 'old', 'exact-other']);
  });

  it('the last query word matches as a prefix; earlier words must be whole words', async () => {
    await seed('articles', [
      { id: '1', title: 'Fiber laser sources' },
      { id: '2', title: 'Fibrous materials' },
    ]);
    const index = client.index('articles');
    expect(ids((await index.search('fib')).hits)).toEqual(['1', '2']);
    expect(ids((await index.search('laser fib')).hits)).toEqual(['1']);
    // "fib" is not the last word here: it needs a whole-word match, which nothing has.
    expect((await index.search('fib laser')).hits).toEqual([]);
    // A trailing space ends the word: no prefix.
    expect((await index.search('fib ')).hits).toEqual([]);
  });

  it('matchingStrategy last drops words from the end; all requires every word', async () => {
    await seed('articles', [
      { id: 'all-three', title: 'fiber laser cutting' },
      { id: 'first-two', title: 'fiber laser welding' },
      { id: 'last-two', title: 'laser cutting' },
    ]);
    const index = client.index('articles');
    const last = await index.search('fiber laser cutting');
    expect(ids(last.hits)).toEqual(['all-three', 'first-two']);
    expect(last.estimatedTotalHits).toBe(2);
    const all = await index.search('fiber laser cutting', { matchingStrategy: 'all' });
    expect(ids(all.hits)).toEqual(['all-three']);
  });

  it('Chinese: documents with 光纤激光器 match the query 激光 (with and without locales)', async () => {
    await seed(
      'articles',
      [
        { id: 'zh-1', title_zh: '高功率光纤激光器市场', body_zh: '中国光纤激光器产业' },
        { id: 'zh-2', title_zh: '激光切割机', body_zh: '工业应用' },
        { id: 'zh-3', title_zh: '半导体市场', body_zh: '芯片' },
      ],
      { localizedAttributes: [{ attributePatterns: ['title_zh', 'body_zh'], locales: ['cmn'] }] },
    );
    const index = client.index('articles');
    expect(ids((await index.search('激光', { locales: ['cmn'] })).hits).sort()).toEqual(['zh-1', 'zh-2']);
    expect(ids((await index.search('激光')).hits).sort()).toEqual(['zh-1', 'zh-2']);
    expect(ids((await index.search('光纤激光器')).hits)).toEqual(['zh-1']);
    // 光纤激光器 is indexed 光纤 + 激光 + 器 (jieba, then the re-cut): 激光 is a whole word of
    // zh-1, which `last` ranks first for matching both words.
    expect(ids((await index.search('激光 市场')).hits)).toEqual(['zh-1', 'zh-2']);
    expect((await index.search('光电')).hits).toEqual([]);
    // No typo tolerance on CJK.
    expect((await index.search('激先')).hits).toEqual([]);
  });

  it('Chinese: jieba words longer than 2 characters are cut again into dictionary bigrams, in documents and queries', async () => {
    await seed('articles', [
      { id: 'device', title: '激光器设备' },
      { id: 'lidar', title: '激光雷达' },
      { id: 'cutting', title: '激光切割设备' },
    ]);
    const index = client.index('articles');
    const all = { matchingStrategy: 'all' as const };
    // 激光器设备 is indexed 激光 + 器 + 设备, 激光雷达 激光 + 雷达 (charabia cut_for_search).
    expect(ids((await index.search('激光设备', all)).hits).sort()).toEqual(['cutting', 'device']);
    expect(ids((await index.search('激光 设备', all)).hits).sort()).toEqual(['cutting', 'device']);
    expect(ids((await index.search('雷达', all)).hits)).toEqual(['lidar']);
    // The query is cut the same way: 激光器 is 激光 + 器, both required.
    expect(ids((await index.search('激光器', all)).hits)).toEqual(['device']);
    expect(ids((await index.search('激光', all)).hits).sort()).toEqual(['cutting', 'device', 'lidar']);
  });

  it('Chinese: re-cut words count towards the 10 query words', async () => {
    await seed('articles', [{ id: 'a', title: '激光器 光纤 设备 市场 技术 应用 工业 中国 产业 芯片 半导体' }]);
    const index = client.index('articles');
    // 9 words written, 10 after the re-cut (激光器 = 激光 + 器): 雷达 is the 11th and ignored.
    const q = '激光器 光纤 设备 市场 技术 应用 工业 中国 产业 雷达';
    expect(ids((await index.search(q, { matchingStrategy: 'all' })).hits)).toEqual(['a']);
  });

  it('mixed scripts: digits join the script group before them, and a query word also matches as two adjacent words', async () => {
    await seed('articles', [
      { id: '5g', title: '采用5G技术的激光器' },
      { id: '3d', title: '金属3D打印' },
      { id: 'year', title: '发布于2024年' },
      { id: 'spaced', title: '发布于 2024 年' },
      { id: 'apart', title: '5 号 G 区' },
    ]);
    const index = client.index('articles');
    const all = { matchingStrategy: 'all' as const };
    // 采用5G技术 is indexed 采用 / 5 / g / 技术: `5g` is found as the adjacent pair 5 + g.
    expect(ids((await index.search('5G', all)).hits)).toEqual(['5g']);
    expect(ids((await index.search('3d', all)).hits)).toEqual(['3d']);
    expect(ids((await index.search('5G 激光器', all)).hits)).toEqual(['5g']);
    // This fake is 1.19 by default: 2024 against Chinese is cut into digits (next test).
    expect(ids((await index.search('2024', all)).hits)).toEqual(['spaced']);
  });

  it('Meilisearch 1.24 and older: 2024 written against Chinese is indexed digit by digit, unless spaces set it apart', async () => {
    const old = await startExtra({ version: '1.19.0' });
    const oldClient = new Meilisearch({ host: old.url });
    await oldClient.index('articles').addDocuments([
      { id: 'year', title: '发布于2024年' },
      { id: 'spaced', title: '发布于 2024 年' },
    ]).waitTask();
    const index = oldClient.index('articles');
    // 发布于2024年: the re-cut splits the jieba word 2024 into 2 / 0 / 2 / 4. Between spaces,
    // 2024 is a number piece that is never segmented.
    expect(ids((await index.search('2024', { matchingStrategy: 'all' })).hits)).toEqual(['spaced']);
    // Meilisearch 1.25+ (charabia 0.9.8): the re-cut leaves ASCII words alone.
    const recent = await startExtra({ version: '1.25.0' });
    const recentClient = new Meilisearch({ host: recent.url });
    await recentClient.index('articles').addDocuments([
      { id: 'year', title: '发布于2024年' },
      { id: 'spaced', title: '发布于 2024 年' },
    ]).waitTask();
    expect(ids((await recentClient.index('articles').search('2024', { matchingStrategy: 'all' })).hits).sort()).toEqual(['spaced', 'year']);
  });

  it('a dumpless upgrade does not re-tokenize: documents keep the old version\'s words until re-indexed', async () => {
    const old = await startExtra({ version: '1.24.0' });
    const oldClient = new Meilisearch({ host: old.url });
    const index = oldClient.index('articles');
    await index.addDocuments([{ id: 'year', title: '发布于2024年' }]).waitTask();
    old.setVersion('1.25.0');
    expect((await index.search('2024', { matchingStrategy: 'all' })).hits).toEqual([]);
    await oldClient.createIndex('fresh', { primaryKey: 'id' }).waitTask();
    await oldClient.index('fresh').addDocuments([{ id: 'year', title: '发布于2024年' }]).waitTask();
    expect(ids((await oldClient.index('fresh').search('2024', { matchingStrategy: 'all' })).hits)).toEqual(['year']);
  });

  it('attributes are indexed up to position 65,536: later words are unsearchable; a hard separator counts 8', async () => {
    const filler = (n: number) => Array.from({ length: n }, () => 'word').join(' ');
    await seed('articles', [
      // 65,535 filler words: positions 0..65534; `last` at 65535 is still indexed.
      { id: 'edge', body: `${filler(65_535)} finale` },
      { id: 'past', body: `${filler(65_536)} xylophone` },
      // Each `. ` moves the next word 8 on: 8,192 sentences of one word end at 65,528.
      { id: 'sentences', body: `${Array.from({ length: 8_192 }, () => 'word').join('. ')}. hiddenword` },
    ]);
    const index = client.index('articles');
    const only = { attributesToRetrieve: ['id'] };
    expect(ids((await index.search('finale', only)).hits)).toEqual(['edge']);
    expect((await index.search('xylophone', only)).hits).toEqual([]);
    expect((await index.search('hiddenword', only)).hits).toEqual([]);
    expect(ids((await index.search('word', only)).hits).sort()).toEqual(['edge', 'past', 'sentences']);
  });

  it('typo tolerance: one typo from 5 letters, none below, as configured', async () => {
    await seed('articles', [
      { id: 'laser', title: 'Laser optics' },
      { id: 'lazer', title: 'Lazer tag arena' },
    ]);
    const index = client.index('articles');
    // Exact match ranks before the typo match (typo rule).
    expect(ids((await index.search('laser ')).hits)).toEqual(['laser', 'lazer']);
    expect(ids((await index.search('optiks ')).hits)).toEqual(['laser']);
    // 4 letters: no typo allowed by default.
    expect((await index.search('lasr ')).hits).toEqual([]);
    await index.updateTypoTolerance({ minWordSizeForTypos: { oneTypo: 4, twoTypos: 8 } }).waitTask();
    expect(ids((await index.search('lasr ')).hits)).toEqual(['laser']);
    await index.updateTypoTolerance({ disableOnWords: ['optiks'] }).waitTask();
    expect((await index.search('optiks ')).hits).toEqual([]);
    await index.updateTypoTolerance({ enabled: false }).waitTask();
    expect(ids((await index.search('laser ')).hits)).toEqual(['laser']);
  });

  it('proximity: documents where the query words are closer rank first', async () => {
    await seed('articles', [
      { id: 'far', title: 'fiber optics for the laser industry' },
      { id: 'near', title: 'new fiber laser industry' },
    ]);
    expect(ids((await client.index('articles').search('fiber laser')).hits)).toEqual(['near', 'far']);
  });

  it('quoted phrases must appear as such, and -word excludes documents', async () => {
    await seed('articles', [
      { id: 'phrase', title: 'fiber laser welding' },
      { id: 'apart', title: 'laser and fiber welding' },
    ]);
    const index = client.index('articles');
    expect(ids((await index.search('"fiber laser"')).hits)).toEqual(['phrase']);
    expect(ids((await index.search('welding -and')).hits)).toEqual(['phrase']);
    expect(ids((await index.search('welding -"fiber laser"')).hits)).toEqual(['apart']);
  });

  it('an empty query is a placeholder search returning every document in insertion order', async () => {
    await seed('articles', corpus(5));
    const r = await client.index('articles').search('');
    expect(ids(r.hits)).toEqual(['doc-0', 'doc-1', 'doc-2', 'doc-3', 'doc-4']);
    expect(r.estimatedTotalHits).toBe(5);
  });

  it('highlights matches in _formatted when asked', async () => {
    await seed('articles', [{ id: '1', title: 'Fiber laser sources' }]);
    const r = await client.index('articles').search('fiber las', { attributesToHighlight: ['title'] });
    expect(r.hits[0]?._formatted).toEqual({ id: '1', title: '<em>Fiber</em> <em>las</em>er sources' });
  });
});

describe('a realistic article index', () => {
  it('serves page/hitsPerPage searches with a quoted IN filter, a date bound, id-only hits and matchingStrategy all', async () => {
    const settings = {
      searchableAttributes: ['title', 'excerpt', 'body', 'section_name', 'author'],
      filterableAttributes: ['section_slug', 'published_at_ts'],
      sortableAttributes: ['published_at_ts'],
      displayedAttributes: ['id', 'slug'],
      rankingRules: ['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness', 'published_at_ts:desc'],
      typoTolerance: { enabled: true, minWordSizeForTypos: { oneTypo: 5, twoTypos: 9 }, disableOnAttributes: ['author'] },
      pagination: { maxTotalHits: 1000000 },
      localizedAttributes: [{ attributePatterns: ['*'], locales: ['eng'] }],
    };
    const doc = (id: number, over: Record<string, unknown>) => ({
      id,
      slug: `s-${id}`,
      title: 'Untitled',
      excerpt: '',
      body: '',
      section_slug: 'lasers',
      section_name: 'Lasers',
      author: 'Ada Lovelace',
      published_at_ts: 1_700_000_000 + id,
      ...over,
    });
    await seed(
      'articles_en',
      [
        doc(1, { title: 'Ultrafast laser pulses' }),
        doc(2, { title: 'Laser pulses in industry', section_slug: 'say "hi"' }),
        doc(3, { title: 'Ultrafast laser pulses', published_at_ts: 1_900_000_000 }),
        doc(4, { title: 'Ultrafast laser pulses', section_slug: null }),
        doc(5, { title: 'Ultrafast laser pulses', published_at_ts: null }),
        doc(6, { body: 'pulses written by Jonathan', author: 'Jonathan Smith' }),
      ],
      settings,
    );
    const result = await client.index('articles_en').search('ultrafast laser pulses', {
      page: 1,
      hitsPerPage: 10,
      filter: ['section_slug IN ["lasers", "say \\"hi\\""]', 'published_at_ts <= 1800000000'],
      attributesToRetrieve: ['id'],
      matchingStrategy: 'all',
      locales: ['eng'],
    });
    expect(result.hits).toEqual([{ id: 1 }]);
    expect(result.totalHits).toBe(1);
    const laser = await client.index('articles_en').search('laser', { page: 1, hitsPerPage: 10, filter: ['section_slug IN ["lasers", "say \\"hi\\""]'], attributesToRetrieve: ['id'], matchingStrategy: 'all' });
    // 2 has "laser" first in its title (attribute rule: word position); 3, 1, 5 tie and go newest
    // first (published_at_ts:desc, null last); 6 only matches "Lasers" in section_name, a later attribute.
    expect(ids(laser.hits)).toEqual([2, 3, 1, 5, 6]);
    // Typos are off on author only: "jonathon" reaches "Jonathan" in the body, "smiht" finds
    // nothing since "Smith" is only in author, where the exact word still matches.
    const search = (q: string) => client.index('articles_en').search(q, { matchingStrategy: 'all' });
    expect((await search('jonathon ')).hits).toEqual([{ id: 6, slug: 's-6' }]);
    expect((await search('smiht ')).hits).toEqual([]);
    expect((await search('smith ')).hits).toEqual([{ id: 6, slug: 's-6' }]);
  });
});

describe('swap indexes', () => {
  it('exchanges the documents and settings of two indexes atomically', async () => {
    await seed('articles', [{ id: 'live', title: 'Live' }], { filterableAttributes: ['section'] });
    await seed('articles_next', [{ id: 'rebuilt', title: 'Rebuilt' }], { filterableAttributes: ['section', 'published_at_ts'] });
    const task = await client.swapIndexes([{ indexes: ['articles', 'articles_next'], rename: false }]).waitTask();
    expect(task).toMatchObject({ status: 'succeeded', type: 'indexSwap', indexUid: null, details: { swaps: [{ indexes: ['articles', 'articles_next'], rename: false }] } });
    expect(meili.requests.find((r) => r.path === '/swap-indexes')?.body).toEqual([{ indexes: ['articles', 'articles_next'], rename: false }]);
    expect(ids((await client.index('articles').search('')).hits)).toEqual(['rebuilt']);
    expect(ids((await client.index('articles_next').search('')).hits)).toEqual(['live']);
    expect(meili.settings('articles').filterableAttributes).toEqual(['section', 'published_at_ts']);
    expect(await client.index('articles_next').getFilterableAttributes()).toEqual(['section']);
    // Earlier tasks now mention the other name.
    const creation = (await client.tasks.getTask(0)) as Task;
    expect(creation.indexUid).toBe('articles_next');
  });

  it('swapping with a missing index fails in the task with index_not_found and changes nothing', async () => {
    await seed('articles', [{ id: 'live' }]);
    const task = await client.swapIndexes([{ indexes: ['articles', 'missing'], rename: false }]).waitTask();
    expect(task.status).toBe('failed');
    expect(task.error?.code).toBe('index_not_found');
    expect(meili.documents('articles')).toEqual([{ id: 'live' }]);
  });

  it('rename: true renames the first index to the second instead of swapping (and refuses an existing target)', async () => {
    await seed('old', [{ id: 'kept' }]);
    await seed('taken', []);
    const task = await client.swapIndexes([{ indexes: ['old', 'fresh'], rename: true }]).waitTask();
    expect(task.status).toBe('succeeded');
    expect(meili.indexUids()).toEqual(['fresh', 'taken']);
    expect(meili.documents('fresh')).toEqual([{ id: 'kept' }]);
    const clash = await client.swapIndexes([{ indexes: ['fresh', 'taken'], rename: true }]).waitTask();
    expect(clash.status).toBe('failed');
    expect(clash.error?.code).toBe('index_already_exists');
  });

  it('accepts the v1.x body without rename, and refuses an index named twice', async () => {
    await seed('a', []);
    await seed('b', []);
    const res = await fetch(`${meili.url}/swap-indexes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ indexes: ['a', 'b'] }]),
    });
    expect(res.status).toBe(202);
    const { taskUid } = (await res.json()) as { taskUid: number };
    const swapped = await client.tasks.waitForTask(taskUid);
    expect(swapped.status).toBe('succeeded');
    expect(swapped.details?.swaps).toEqual([{ indexes: ['a', 'b'], rename: false }]);
    const dup = await apiError(() => client.swapIndexes([{ indexes: ['a', 'b'], rename: false }, { indexes: ['b', 'c'], rename: false }]));
    expect(dup.cause?.code).toBe('invalid_swap_duplicate_index_found');
  });
});

describe('tasks', () => {
  it('lists tasks with statuses, indexUids, types, limit and from filters, newest first', async () => {
    await seed('a', [{ id: '1' }]);
    await seed('b', []);
    await client.createIndex('a').waitTask(); // fails: exists
    const all = await client.tasks.getTasks();
    expect(all.results.map((t) => t.uid)).toEqual([3, 2, 1, 0]);
    expect(all).toMatchObject({ total: 4, limit: 20, from: 3, next: null });
    expect((await client.tasks.getTasks({ statuses: ['failed'] })).results.map((t) => t.uid)).toEqual([3]);
    expect((await client.tasks.getTasks({ indexUids: ['a'], types: ['indexCreation'] })).results.map((t) => t.uid)).toEqual([3, 0]);
    const page = await client.tasks.getTasks({ limit: 2, from: 2 });
    expect(page).toMatchObject({ total: 4, limit: 2, from: 2, next: 0 });
    expect(page.results.map((t) => t.uid)).toEqual([2, 1]);
    const bad = await apiError(() => client.tasks.getTasks({ statuses: ['done' as never] }));
    expect(bad.cause?.code).toBe('invalid_task_statuses');
    const missing = await apiError(() => client.tasks.getTask(99));
    expect(missing.response.status).toBe(404);
    expect(missing.cause?.code).toBe('task_not_found');
  });

  it('deleteTasks is a taskDeletion task, run before other enqueued tasks, that removes finished matching tasks only', async () => {
    // Slow enough that the addition below is certainly still enqueued when the deletion arrives.
    const slow = await startExtra({ taskDelayMs: 40 });
    const c = new Meilisearch({ host: slow.url });
    await c.createIndex('a', { primaryKey: 'id' }).waitTask();
    await c.index('a').addDocuments([{ id: '1' }]).waitTask();
    const cutoff = new Date(Date.now() + 1).toISOString();
    await new Promise((r) => setTimeout(r, 5));
    const { taskUid: pendingUid } = await c.index('a').addDocuments([{ id: '2' }]);
    const deletion = c.tasks.deleteTasks({ statuses: ['succeeded', 'enqueued', 'processing'] });
    const enqueued = await deletion;
    expect(enqueued).toMatchObject({ type: 'taskDeletion', indexUid: null, status: 'enqueued' });
    expect(slow.requests.at(-1)).toMatchObject({ method: 'DELETE', path: '/tasks', query: { statuses: 'succeeded,enqueued,processing' } });
    const done = await deletion.waitTask();
    expect(done.status).toBe('succeeded');
    expect(done.details).toEqual({ matchedTasks: 3, deletedTasks: 2, originalFilter: '?statuses=succeeded%2Cenqueued%2Cprocessing' });
    // The enqueued addition was matched but not deleted; it runs after the deletion.
    const pending = await c.tasks.waitForTask(pendingUid);
    expect(pending.status).toBe('succeeded');
    expect(Date.parse(pending.startedAt as string)).toBeGreaterThanOrEqual(Date.parse(done.finishedAt as string));
    expect(slow.tasks().map((t) => t.uid)).toEqual([pendingUid, enqueued.taskUid]);
    const gone = await apiError(() => c.tasks.getTask(0));
    expect(gone.response.status).toBe(404);
    expect(gone.cause?.code).toBe('task_not_found');

    const byDate = await c.tasks.deleteTasks({ beforeEnqueuedAt: cutoff }).waitTask();
    expect(byDate.details).toMatchObject({ matchedTasks: 0, deletedTasks: 0 });
    const everything = await c.tasks.deleteTasks({ beforeEnqueuedAt: new Date(Date.now() + 1000).toISOString() }).waitTask();
    expect(everything.details?.deletedTasks).toBe(3);
    expect(slow.tasks().map((t) => t.uid)).toEqual([everything.uid]);

    const empty = await apiError(() => c.tasks.deleteTasks({}));
    expect(empty.response.status).toBe(400);
    expect(empty.cause?.code).toBe('missing_task_filters');
  });
});

describe('authorization', () => {
  it('missing key -> 401 missing_authorization_header; wrong key -> 403 invalid_api_key; /health needs none', async () => {
    const anonymous = new Meilisearch({ host: meili.url });
    expect((await anonymous.health()).status).toBe('available');
    const missing = await apiError(() => anonymous.getIndexes());
    expect(missing.response.status).toBe(401);
    expect(missing.cause).toMatchObject({ code: 'missing_authorization_header', type: 'auth' });
    const wrong = new Meilisearch({ host: meili.url, apiKey: 'nope' });
    const invalid = await apiError(() => wrong.index('x').search('q'));
    expect(invalid.response.status).toBe(403);
    expect(invalid.cause).toMatchObject({ code: 'invalid_api_key', type: 'auth' });
  });

  it('without a master key, no key is needed', async () => {
    const open = await startExtra({});
    expect((await new Meilisearch({ host: open.url }).getIndexes()).total).toBe(0);
  });
});

describe('failure switches as the client sees them', () => {
  it('setDown: the client throws MeilisearchRequestError (connection refused); setDown(false) serves again on the same port', async () => {
    await seed('articles', []);
    await meili.setDown(true);
    // The first request may die on the pooled keep-alive socket (UND_ERR_SOCKET), as when a real
    // server process dies; the next one finds the port closed (ECONNREFUSED). Same class both times.
    const first = await thrown(() => client.index('articles').search('x'));
    expect(first).toBeInstanceOf(MeilisearchRequestError);
    expect(first).not.toBeInstanceOf(MeilisearchApiError);
    const err = await thrown(() => client.index('articles').search('x'));
    expect(err).toBeInstanceOf(MeilisearchRequestError);
    const cause = (err as Error).cause as Error & { cause?: { code?: string } };
    expect(cause).toBeInstanceOf(TypeError);
    expect(cause.cause?.code).toBe('ECONNREFUSED');
    await meili.setDown(false);
    expect((await client.index('articles').search('')).hits).toEqual([]);
  });

  it('setHang: with the client timeout option it throws MeilisearchRequestError caused by MeilisearchRequestTimeOutError', async () => {
    await seed('articles', []);
    const impatient = new Meilisearch({ host: meili.url, apiKey: KEY, timeout: 150 });
    meili.setHang(true);
    const err = await thrown(() => impatient.index('articles').search('x'));
    expect(err).toBeInstanceOf(MeilisearchRequestError);
    expect((err as Error).cause).toBeInstanceOf(MeilisearchRequestTimeOutError);
    expect(((err as Error).cause as Error).message).toBe('request timed out after 150ms');
    // A write that timed out is not undone: released, the held request is still processed.
    await thrown(() => impatient.index('articles').addDocuments([{ id: 'late' }]));
    meili.setHang(false);
    await meili.idle();
    await new Promise((r) => setTimeout(r, 20));
    await meili.idle();
    expect(meili.documents('articles')).toEqual([{ id: 'late' }]);
  });

  it('setHang while waiting for a task: waitTask throws MeilisearchTaskTimeOutError at its own timeout', async () => {
    await seed('articles', []);
    const enqueued = await client.index('articles').addDocuments([{ id: '1' }]);
    meili.setHang(true);
    const err = await thrown(() => client.tasks.waitForTask(enqueued.taskUid, { timeout: 200, interval: 20 }));
    expect(err).toBeInstanceOf(MeilisearchTaskTimeOutError);
    expect((err as MeilisearchTaskTimeOutError).cause).toEqual({ taskUid: enqueued.taskUid, timeout: 200 });
    meili.setHang(false);
    expect((await client.tasks.waitForTask(enqueued.taskUid)).status).toBe('succeeded');
  });

  it('failRequests(n): the next n requests throw MeilisearchApiError with that status, then requests succeed', async () => {
    await seed('articles', []);
    meili.failRequests(2, { status: 503, code: 'service_unavailable', message: 'overloaded' });
    for (let i = 0; i < 2; i++) {
      const err = await apiError(() => client.index('articles').search(''));
      expect(err.response.status).toBe(503);
      expect(err.cause).toMatchObject({ code: 'service_unavailable', message: 'overloaded' });
    }
    expect((await client.index('articles').search('')).hits).toEqual([]);
    meili.failRequests(1, { status: 500 });
    const internal = await apiError(() => client.health());
    expect(internal.response.status).toBe(500);
    expect(internal.cause?.code).toBe('internal');
  });

  it('HTML 502: the client throws a plain SyntaxError from JSON.parse, not a Meilisearch error class', async () => {
    meili.setHtmlBadGateway(true);
    const err = await thrown(() => client.health());
    expect(err).toBeInstanceOf(SyntaxError);
    expect(err).not.toBeInstanceOf(MeilisearchError);
    const res = await fetch(`${meili.url}/health`);
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toBe('text/html');
    meili.setHtmlBadGateway(false);
    expect((await client.health()).status).toBe('available');
  });

  it('failNextTask: the HTTP call succeeds and the task ends failed with the given error, changing nothing', async () => {
    await seed('articles', []);
    meili.failNextTask({ code: 'internal', message: 'disk on fire' });
    const task = await client.index('articles').addDocuments([{ id: '1' }]).waitTask();
    expect(task.status).toBe('failed');
    expect(task.error).toEqual({ message: 'disk on fire', code: 'internal', type: 'internal', link: 'https://docs.meilisearch.com/errors#internal' });
    expect(meili.documents('articles')).toEqual([]);
    // Only the next task.
    expect((await client.index('articles').addDocuments([{ id: '1' }]).waitTask()).status).toBe('succeeded');
  });

  it('close() drops hung connections so nothing keeps the process alive', async () => {
    const fake = await startFakeMeilisearch({});
    fake.setHang(true);
    const pending = fetch(`${fake.url}/health`).then(
      () => 'answered',
      () => 'dropped',
    );
    await new Promise((r) => setTimeout(r, 20));
    await fake.close();
    expect(await pending).toBe('dropped');
    const after = await thrown(() => fetch(`${fake.url}/health`));
    expect(after).toBeInstanceOf(TypeError);
  });
});
