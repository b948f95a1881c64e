import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestContext } from '../../../src/http/pipeline/context.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { expectError, isoPlus, MINUTE } from '../../support/contract-helpers.js';

/*
 * Per-key rate limits through the real app on a real server. The app's clock is a test clock
 * that only moves when a test moves it, so buckets refill exactly when told: no timing.
 * Default here: 60 requests per minute, 5 seconds of burst (5 requests at once).
 */

const NOW = '2026-11-01T12:00:00Z';
const dir = tempDir();
const dbPath = dir.path('snapshot.db');
const clock = testClock(NOW);
let api: TestApi;
const keys: { id: number; key: string }[] = [];
const seen: { status: number; route: string | undefined; keyId: number | undefined; errorCode: string | undefined }[] = [];

const POLICY = '"default";q=5;w=5';
// draft-ietf-httpapi-ratelimit-headers-10: an sf-list of named items with integer parameters.
const CURRENT = /^"default";r=(\d+);t=(\d+)$/;

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber', name: 'Fiber' })],
    articles: [rawArticle({ slug: 'hello', title: 'Laser hello', section_slug: 'fiber', published_at: isoPlus(NOW, -MINUTE) })],
  });
  for (let i = 0; i < 6; i++) keys.push(addKey(dbPath, `Partner ${i}`));
  api = await startApi({
    databasePath: dbPath,
    clock,
    rateLimit: { perMinute: 60, burstSeconds: 5 },
    onResponse: (_req, res, context: RequestContext) =>
      seen.push({ status: res.statusCode, route: context.route?.name, keyId: context.key?.id, errorCode: context.errorCode }),
  });
});

afterAll(async () => {
  await api.close();
  dir.cleanup();
});

const get = (path: string, key: string) => api.request.get(path).set('X-API-Key', key);
const remaining = (res: { headers: Record<string, string> }) => Number(CURRENT.exec(res.headers['ratelimit'] ?? '')?.[1]);

describe('a partner past its rate', () => {
  it('gets 503 rate_limited with Retry-After and the RateLimit fields, and is served again when its bucket refills', async () => {
    const { key } = keys[0]!;
    for (let i = 4; i >= 0; i--) {
      const res = await get('/api/v1/articles', key);
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-policy']).toBe(POLICY);
      expect(remaining(res)).toBe(i);
    }
    const refused = await get('/api/v1/articles', key);
    expectError(refused, 503, 'rate_limited');
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['ratelimit-policy']).toBe(POLICY);
    expect(refused.headers['ratelimit']).toBe('"default";r=0;t=5');
    expect(refused.body.error.message).toMatch(/retry in 1 second/);
    // A refusal costs nothing: it does not push the next accepted request further away.
    expectError(await get('/api/v1/categories', key), 503, 'rate_limited');

    clock.advance(1_000);
    const again = await get('/api/v1/articles', key);
    expect(again.status).toBe(200);
    expect(remaining(again)).toBe(0);
    expectError(await get('/api/v1/articles', key), 503, 'rate_limited');

    clock.advance(5_000);
    expect(remaining(await get('/api/v1/articles', key))).toBe(4);
    expect(api.app.limiter.stats().refused).toBe(3);
  });

  it('is logged with its key id and the error code, as any refusal', async () => {
    const refusals = seen.filter((s) => s.errorCode === 'rate_limited');
    expect(refusals.length).toBeGreaterThanOrEqual(3);
    for (const refusal of refusals) expect(refusal).toMatchObject({ status: 503, keyId: keys[0]!.id });
    const lines = api.logs.map((l) => JSON.parse(l) as { errorCode?: string; keyId?: number; res?: { status: number } });
    expect(lines.some((l) => l.errorCode === 'rate_limited' && l.keyId === keys[0]!.id && l.res?.status === 503)).toBe(true);
  });
});

describe('the RateLimit fields', () => {
  it('are on every response to a valid key: cached or not, 304, HEAD, 400, 404, search, unknown path', async () => {
    const { key } = keys[1]!;
    const first = await get('/api/v1/articles/hello', key);
    const responses = [
      first,
      await get('/api/v1/articles/hello', key),
      await get('/api/v1/articles/hello', key).set('If-None-Match', first.headers['etag']!),
      await api.request.head('/api/v1/categories').set('X-API-Key', key),
    ];
    clock.advance(5_000);
    responses.push(
      await get('/api/v1/articles?limit=99', key),
      await get('/api/v1/articles/nope', key),
      await get('/api/v1/search?q=laser', key),
      await get('/api/v1/nowhere', key),
    );
    expect(responses.map((r) => r.status)).toEqual([200, 200, 304, 200, 400, 404, 200, 404]);
    for (const res of responses) {
      expect(res.headers['ratelimit-policy']).toBe(POLICY);
      expect(res.headers['ratelimit']).toMatch(CURRENT);
    }
    // Each counted once: 4 before the refill, 4 after.
    expect(responses.map(remaining)).toEqual([4, 3, 2, 1, 4, 3, 2, 1]);
  });

  it('are not sent where no key was accepted: a 401, /health, the OpenAPI document', async () => {
    for (const res of [
      await get('/api/v1/articles', 'lsk_nope'),
      await api.request.get('/api/v1/articles'),
      await api.request.get('/health'),
      await get('/api/v1/openapi.json', keys[1]!.key),
    ]) {
      expect(res.headers['ratelimit']).toBeUndefined();
      expect(res.headers['ratelimit-policy']).toBeUndefined();
    }
  });

  it('count a request once when the fast path hands it over to Express', async () => {
    clock.advance(5_000);
    const { key } = keys[2]!;
    // A new page is a cache miss (the fast path checks the key, Express answers), then a hit.
    const miss = await get('/api/v1/articles?limit=3', key);
    const hit = await get('/api/v1/articles?limit=3', key);
    expect([remaining(miss), remaining(hit)]).toEqual([4, 3]);
    expect(hit.text).toBe(miss.text);
    const last = seen.slice(-2);
    // Both paths label the route the same way and carry the key in the request context.
    expect(last).toEqual([
      { status: 200, route: '/api/v1/articles', keyId: keys[2]!.id, errorCode: undefined },
      { status: 200, route: '/api/v1/articles', keyId: keys[2]!.id, errorCode: undefined },
    ]);
  });
});

describe('keys', () => {
  it('are limited independently: one key past its rate does not slow another', async () => {
    clock.advance(5_000);
    const [a, b] = [keys[3]!, keys[4]!];
    for (let i = 0; i < 5; i++) expect((await get('/api/v1/categories', a.key)).status).toBe(200);
    expectError(await get('/api/v1/categories', a.key), 503, 'rate_limited');
    const other = await get('/api/v1/categories', b.key);
    expect(other.status).toBe(200);
    expect(remaining(other)).toBe(4);
    expectError(await get('/api/v1/categories', a.key), 503, 'rate_limited');
  });
});
