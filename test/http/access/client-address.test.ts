import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiMetrics } from '../../../src/observability/api-metrics.js';
import { addKey, startApi, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { parsedLogs } from '../../support/worker.js';

/*
 * The client address in the request log, by TRUST_PROXY's rules (Express's `trust proxy`),
 * the same whether the fast path or Express answered.
 */

const dir = tempDir();
const dbPath = dir.path('snapshot.db');
let key: string;
let direct: TestApi;
let proxied: TestApi;
let twoHops: TestApi;
const registry = new Registry();

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber' }), { ...rawSection({ slug: 'fiber' }), locale: 'zh' }],
    articles: [rawArticle({ slug: 'hello', section_slug: 'fiber', published_at: '2026-01-01T00:00:00Z' })],
  });
  key = addKey(dbPath).key;
  direct = await startApi({ databasePath: dbPath });
  // The fast path on, whatever FAST_PATH says: the client address must be the same from both.
  proxied = await startApi({ databasePath: dbPath, fastPath: true, deps: { trustProxy: 'loopback', metrics: new ApiMetrics(registry) } });
  twoHops = await startApi({ databasePath: dbPath, deps: { trustProxy: 2 } });
});

afterAll(async () => {
  await Promise.all([direct.close(), proxied.close(), twoHops.close()]);
  dir.cleanup();
});

/** The `req.client` of the request log line for this request id. */
function clientLogged(api: TestApi, requestId: string): unknown {
  const line = parsedLogs(api.logs).find((l) => (l.req as { id?: string } | undefined)?.id === requestId);
  return (line?.req as { client?: unknown } | undefined)?.client;
}

async function send(api: TestApi, id: string, path: string, headers: Record<string, string>) {
  const res = await api.request.get(path).set({ 'X-Request-Id': id, ...headers });
  await expect.poll(() => clientLogged(api, id) !== undefined, { timeout: 10_000 }).toBe(true);
  return { status: res.status, client: clientLogged(api, id) };
}

describe('the client address in request logs', () => {
  const forwarded = { 'X-Forwarded-For': '198.51.100.9, 203.0.113.7' };

  it('is the socket peer by default, whatever X-Forwarded-For says', async () => {
    const got = await send(direct, 'direct-1', '/api/v1/articles', { 'X-API-Key': key, ...forwarded });
    expect(got).toEqual({ status: 200, client: '127.0.0.1' });
  });

  it('is the first untrusted X-Forwarded-For hop behind a trusted proxy, for Express and the fast path alike', async () => {
    const miss = await send(proxied, 'proxied-1', '/api/v1/articles', { 'X-API-Key': key, ...forwarded });
    // Kept on its second request (src/lib/doorkeeper.ts), answered from the cache on the third.
    const kept = await send(proxied, 'proxied-1b', '/api/v1/articles', { 'X-API-Key': key, ...forwarded });
    const hit = await send(proxied, 'proxied-2', '/api/v1/articles', { 'X-API-Key': key, ...forwarded });
    const refused = await send(proxied, 'proxied-3', '/api/v1/articles', { ...forwarded });
    expect(miss).toEqual({ status: 200, client: '203.0.113.7' });
    expect(kept).toEqual({ status: 200, client: '203.0.113.7' });
    expect(hit).toEqual({ status: 200, client: '203.0.113.7' });
    expect(refused).toEqual({ status: 401, client: '203.0.113.7' });
    // The third request was answered from the response cache, without Express.
    const fast = await registry.getSingleMetric('syndication_fast_path_responses_total')!.get();
    expect(fast.values[0]?.value).toBe(1);
  });

  it('counts hops when TRUST_PROXY is a number', async () => {
    const got = await send(twoHops, 'hops-1', '/health', forwarded);
    expect(got).toEqual({ status: 200, client: '198.51.100.9' });
  });
});
