import { Meilisearch, MeilisearchApiError } from 'meilisearch';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeMeilisearch, type FakeMeilisearch, type FakeMeilisearchOptions } from './fake-meilisearch.js';

/*
 * What the fake refuses as the real engine does: version-dependent payloads, oversized bodies,
 * keys without the right action, and how document tasks are batched.
 */

const MASTER = 'strict-master-key';
const started: FakeMeilisearch[] = [];

async function fake(options: FakeMeilisearchOptions = {}): Promise<{ meili: FakeMeilisearch; client: Meilisearch }> {
  const meili = await startFakeMeilisearch({ masterKey: MASTER, ...options });
  started.push(meili);
  return { meili, client: new Meilisearch({ host: meili.url, apiKey: MASTER }) };
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((f) => f.close()));
});

async function apiError(fn: () => Promise<unknown>): Promise<MeilisearchApiError> {
  try {
    await fn();
  } catch (error) {
    expect(error).toBeInstanceOf(MeilisearchApiError);
    return error as MeilisearchApiError;
  }
  throw new Error('expected a rejection, got a resolution');
}

async function twoIndexes(client: Meilisearch): Promise<void> {
  for (const uid of ['live', 'next']) expect((await client.createIndex(uid, { primaryKey: 'id' }).waitTask()).status).toBe('succeeded');
}

describe('version-dependent payloads', () => {
  it('answers GET /version with the version it pretends to be', async () => {
    const { client } = await fake({ version: '1.17.1' });
    expect((await client.getVersion()).pkgVersion).toBe('1.17.1');
  });

  it('refuses `rename` in a swap before 1.18 as an unknown field, and accepts `{ indexes }` alone', async () => {
    const { client } = await fake({ version: '1.17.1' });
    await twoIndexes(client);
    const error = await apiError(() => client.swapIndexes([{ indexes: ['live', 'next'], rename: false }]));
    expect(error.response.status).toBe(400);
    expect(error.cause).toMatchObject({ code: 'bad_request', message: 'Unknown field `rename` inside `[0]`: expected one of `indexes`' });
    const task = await client.swapIndexes([{ indexes: ['live', 'next'] } as never]).waitTask();
    expect(task).toMatchObject({ status: 'succeeded', details: { swaps: [{ indexes: ['live', 'next'] }] } });
  });

  it('accepts `rename` from 1.18 on and renames with it', async () => {
    const { meili, client } = await fake({ version: '1.18.0' });
    expect((await client.createIndex('next', { primaryKey: 'id' }).waitTask()).status).toBe('succeeded');
    const task = await client.swapIndexes([{ indexes: ['next', 'live'], rename: true }]).waitTask();
    expect(task.status).toBe('succeeded');
    expect(meili.indexUids()).toEqual(['live']);
  });
});

describe('payload size limit', () => {
  it('answers 413 payload_too_large past the limit, and nothing is enqueued', async () => {
    const { meili, client } = await fake({ payloadLimitBytes: 1_048_576 });
    const big = [{ id: 1, body: 'x'.repeat(1_100_000) }];
    const error = await apiError(() => client.index('articles').addDocuments(big));
    expect(error.response.status).toBe(413);
    expect(error.cause).toMatchObject({
      code: 'payload_too_large',
      type: 'invalid_request',
      message: 'The provided payload reached the size limit. The maximum accepted payload size is 1 MiB.',
    });
    expect(meili.tasks()).toEqual([]);
    const small = await client.index('articles').addDocuments([{ id: 1, body: 'x'.repeat(1000) }]).waitTask();
    expect(small.status).toBe('succeeded');
  });

  it('defaults to the engine default of 100 MB', async () => {
    const { client } = await fake();
    const error = await apiError(() => client.index('articles').addDocumentsFromString(`[{"id":1,"body":"${'x'.repeat(100_000_000)}"}]`, 'application/json'));
    expect(error.response.status).toBe(413);
    expect(error.cause?.message).toContain('95.37 MiB');
  });
});

describe('API keys', () => {
  const keys = [
    { key: 'search-key', actions: ['search'], indexes: ['articles_*'] },
    { key: 'admin-key', actions: ['*'], indexes: ['*'] },
  ];

  it('lets a search-only key search the indexes it covers, and nothing else', async () => {
    const { client: master } = await fake({ apiKeys: keys });
    expect((await master.createIndex('articles_en', { primaryKey: 'id' }).waitTask()).status).toBe('succeeded');
    expect((await master.createIndex('private', { primaryKey: 'id' }).waitTask()).status).toBe('succeeded');
    const search = new Meilisearch({ host: started[0]!.url, apiKey: 'search-key' });
    expect((await search.index('articles_en').search('x')).hits).toEqual([]);
    for (const attempt of [
      () => search.index('private').search('x'),
      () => search.index('articles_en').addDocuments([{ id: 1 }]),
      () => search.index('articles_en').getSettings(),
      () => search.getVersion(),
      () => search.tasks.getTasks(),
    ]) {
      const error = await apiError(attempt);
      expect(error.response.status).toBe(403);
      expect(error.cause).toMatchObject({ code: 'invalid_api_key', type: 'auth', message: 'The provided API key is invalid.' });
    }
  });

  it('lets an admin key manage indexes, documents, settings, tasks and swaps', async () => {
    const { meili } = await fake({ apiKeys: keys });
    const admin = new Meilisearch({ host: meili.url, apiKey: 'admin-key' });
    await twoIndexes(admin);
    expect((await admin.index('next').addDocuments([{ id: 1 }]).waitTask()).status).toBe('succeeded');
    expect((await admin.index('next').updateSettings({ filterableAttributes: ['id'] }).waitTask()).status).toBe('succeeded');
    expect((await admin.swapIndexes([{ indexes: ['live', 'next'], rename: false }]).waitTask()).status).toBe('succeeded');
    expect((await admin.getVersion()).pkgVersion).toMatch(/^1\./);
    expect(meili.documents('live')).toEqual([{ id: 1 }]);
  });

  it('answers 401 without a key and 403 for an unknown one', async () => {
    const { meili } = await fake({ apiKeys: keys });
    const none = await apiError(() => new Meilisearch({ host: meili.url }).getVersion());
    expect(none.response.status).toBe(401);
    expect(none.cause?.code).toBe('missing_authorization_header');
    const unknown = await apiError(() => new Meilisearch({ host: meili.url, apiKey: 'nope' }).getVersion());
    expect(unknown.response.status).toBe(403);
    expect(unknown.cause?.code).toBe('invalid_api_key');
  });
});

describe('autobatching of document tasks', () => {
  it('processes consecutive additions to one index as one batch, sharing its batchUid', async () => {
    const { meili, client } = await fake({ taskDelayMs: 50 });
    // Keeps the scheduler busy while the additions arrive, so they wait together.
    const other = await client.createIndex('other');
    const index = client.index('articles');
    const tasks = [];
    for (let i = 0; i < 4; i++) tasks.push(await index.addDocuments([{ id: i }], { primaryKey: 'id' }));
    const done = [];
    for (const t of tasks) done.push(await client.tasks.waitForTask(t.taskUid, { timeout: 5_000, interval: 10 }));
    expect(done.every((t) => t.status === 'succeeded')).toBe(true);
    expect(new Set(done.map((t) => t.batchUid)).size).toBe(1);
    expect(new Set(done.map((t) => t.startedAt)).size).toBe(1);
    const created = await client.tasks.getTask(other.taskUid);
    expect(created.batchUid).not.toBe(done[0]!.batchUid);
    expect(meili.documents('articles')).toHaveLength(4);
  });

  it('fails every task of a batch when one document of it is invalid, and applies none of them', async () => {
    const { meili, client } = await fake({ taskDelayMs: 50 });
    expect((await client.createIndex('articles', { primaryKey: 'id' }).waitTask()).status).toBe('succeeded');
    const index = client.index('articles');
    // Held while the first (slow) creation of another index runs, so the three are batched.
    await client.createIndex('other');
    const good = await index.addDocuments([{ id: 1 }]);
    const bad = await index.addDocuments([{ id: 'not valid!' }]);
    const later = await index.addDocuments([{ id: 2 }]);
    const results = [];
    for (const t of [good, bad, later]) results.push(await client.tasks.waitForTask(t.taskUid, { timeout: 5_000, interval: 10 }));
    expect(results.map((t) => t.status)).toEqual(['failed', 'failed', 'failed']);
    expect(new Set(results.map((t) => t.batchUid)).size).toBe(1);
    expect(results.every((t) => t.error?.code === 'invalid_document_id')).toBe(true);
    expect(meili.documents('articles')).toEqual([]);
  });
});
