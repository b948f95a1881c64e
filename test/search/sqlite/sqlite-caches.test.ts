import { Agent, request } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseCache } from '../../../src/http/cache/representation.js';
import { AdmittedEngine } from '../../../src/search/admitted-engine.js';
import { SqliteFtsEngine } from '../../../src/search/sqlite/sqlite-fts.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { expectError } from '../../support/contract-helpers.js';

const NOW = '2026-11-01T12:00:00Z';
const BUDGET = 512 * 1024;
// 20,000 distinct values in all: half sections on the list, half search terms.
const DISTINCT = 10_000;
const dir = tempDir('search-caches-');
const dbPath = dir.path('snapshot.db');
// Every answer kept on its first request: the worst case of a client that asks each one twice,
// which the byte bound must hold (the API's own cache keeps an answer on its second request).
const cache = new ResponseCache(BUDGET, { everyAnswer: true });
// The per-word lists have their own byte budget (SEARCH_TERM_CACHE_MB): the same small one here,
// or its 16 MB default would be most of what the measure below counts.
const engine = new SqliteFtsEngine({ cacheBytes: BUDGET, termBytes: BUDGET, rankAllMax: 5_000 });
let api: TestApi;
let keyA: string;
let keyB: string;

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber', name: 'Fiber', position: 1 })],
    articles: Array.from({ length: 30 }, (_, i) =>
      rawArticle({ slug: `osprey-${i}`, title: `Osprey lens ${i}`, section_slug: 'fiber', published_at: `2026-10-${String(1 + (i % 28)).padStart(2, '0')}T00:00:00Z` }),
    ),
  });
  keyA = addKey(dbPath, 'Partner A').key;
  keyB = addKey(dbPath, 'Partner B').key;
  api = await startApi({
    databasePath: dbPath,
    clock: testClock(NOW),
    engine: new AdmittedEngine(engine, { concurrency: 4, queue: 64, maxWaitMs: 60_000, timeoutMs: 30_000 }),
    responseCache: cache,
    logLevel: 'warn',
  });
});

afterAll(async () => {
  await api.close();
  dir.cleanup();
});

/** Sends every path once over a few keep-alive connections; returns the statuses seen. */
async function sendAll(paths: string[], key: string): Promise<Record<number, number>> {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const statuses: Record<number, number> = {};
  let next = 0;
  const one = (path: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(`${api.url}${path}`, { agent, headers: { 'X-API-Key': key } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < paths.length) {
        const status = await one(paths[next++]!);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  agent.destroy();
  return statuses;
}

// A full collection before each reading, so that only what is still referenced counts.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function liveBytes(): number {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

describe('caches bounded in bytes', () => {
  it(`keeps ${2 * DISTINCT} distinct sections and search terms within the budget`, async () => {
    const pad = 'x'.repeat(80);
    // Warm up first: the first requests build views, statements and code, which stay.
    await sendAll(Array.from({ length: 1000 }, (_, i) => `/api/v1/articles?section=warm${i}`), keyA);
    await sendAll(Array.from({ length: 1000 }, (_, i) => `/api/v1/search?q=warm${i}`), keyA);
    // The test's own 20,000 paths (about 4 MB) exist before the first reading, as flat strings:
    // V8 flattens a concatenated string in place when it is first read, and that copy would
    // otherwise be counted as the server's growth.
    const flat = (paths: string[]) => JSON.parse(JSON.stringify(paths)) as string[];
    const lists = flat(Array.from({ length: DISTINCT }, (_, i) => `/api/v1/articles?section=${pad}${i}`));
    const searches = flat(Array.from({ length: DISTINCT }, (_, i) => `/api/v1/search?q=${encodeURIComponent(`osprey ${pad}${i} ${'y'.repeat(80)}`)}`));
    const before = liveBytes();
    expect(await sendAll(lists, keyA)).toEqual({ 200: DISTINCT });
    expect(await sendAll(searches, keyA)).toEqual({ 200: DISTINCT });
    const responses = cache.stats();
    expect(responses.bytes).toBeLessThanOrEqual(BUDGET);
    expect(responses.entries).toBeGreaterThan(100);
    expect(responses.entries).toBeLessThan(2 * DISTINCT);
    expect(responses.misses).toBeGreaterThanOrEqual(2 * DISTINCT);
    const ranked = engine.stats();
    expect(ranked.ranked_cache_bytes).toBeLessThanOrEqual(BUDGET);
    // Unbounded, these 20,000 answers would hold over 15 MB (bodies echo q, keys hold it).
    const grown = liveBytes() - before;
    expect(grown).toBeLessThan(2 * BUDGET + 6 * 1024 * 1024);
  }, 180_000);
});

describe('cache keys', () => {
  it('does not let section= (empty: matches nothing) change another partner\'s answer', async () => {
    const empty = await api.request.get('/api/v1/search?q=osprey&section=').set('X-API-Key', keyA);
    expect(empty.status).toBe(200);
    expect(empty.body.meta.total).toBe(0);
    const other = await api.request.get('/api/v1/search?q=osprey').set('X-API-Key', keyB);
    expect(other.body.meta.total).toBe(30);
    const list = await api.request.get('/api/v1/articles?section=').set('X-API-Key', keyA);
    expect(list.body.meta.total).toBe(0);
    expect((await api.request.get('/api/v1/articles').set('X-API-Key', keyB)).body.meta.total).toBe(30);
    // And the other way round: a cached full answer does not leak into the empty section.
    expect((await api.request.get('/api/v1/search?q=osprey&section=').set('X-API-Key', keyB)).body.meta.total).toBe(0);
  });

  it('keeps page, limit, locale and the words apart', async () => {
    const a = await api.request.get('/api/v1/search?q=osprey&limit=5&page=2').set('X-API-Key', keyA);
    const b = await api.request.get('/api/v1/search?q=osprey&limit=5&page=3').set('X-API-Key', keyA);
    expect(a.body.data).toHaveLength(5);
    expect(a.body.data[0].slug).not.toBe(b.body.data[0].slug);
    expect((await api.request.get('/api/v1/search?q=osprey&locale=zh').set('X-API-Key', keyA)).body.meta.total).toBe(0);
    expect((await api.request.get('/api/v1/search?q=osprey lens 7').set('X-API-Key', keyA)).body.meta.total).toBe(30);
  });
});

describe('section length', () => {
  it.each(['/api/v1/articles', '/api/v1/search?q=osprey'])('answers 400 invalid_parameter for a section over 100 characters on %s', async (path) => {
    const sep = path.includes('?') ? '&' : '?';
    const long = await api.request.get(`${path}${sep}section=${'s'.repeat(101)}`).set('X-API-Key', keyA);
    expectError(long, 400, 'invalid_parameter', 'section');
    expect(long.body.error.message).toMatch(/100 characters/);
    const ok = await api.request.get(`${path}${sep}section=${'s'.repeat(100)}`).set('X-API-Key', keyA);
    expect(ok.status).toBe(200);
  });

  it('refuses it the same way when the answer could come from the cached fast path', async () => {
    const path = `/api/v1/articles?section=${'s'.repeat(101)}`;
    for (let i = 0; i < 2; i++) expectError(await api.request.get(path).set('X-API-Key', keyA), 400, 'invalid_parameter', 'section');
  });
});
