import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/http/pipeline/rate-limit.js';
import { addKey, startApi, testClock, type TestApi } from '../support/api.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';

/*
 * A 304 costs a partner half a request of its rate (src/http/pipeline/revalidation-discount.ts):
 * a partner revalidating as asked gets about twice as many answers from its burst as one
 * fetching everything again. The clock stands still, so only the burst counts.
 */

const NOW = '2026-11-01T12:00:00Z';
const dir = tempDir('revalidation-cost-');
const dbPath = dir.path('snapshot.db');
let api: TestApi;

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber' })],
    articles: [rawArticle({ slug: 'hello', section_slug: 'fiber', published_at: '2026-10-01T08:00:00Z' })],
  });
  // 60 a minute with a 10 s burst: 10 requests at once.
  api = await startApi({ databasePath: dbPath, clock: testClock(NOW), rateLimit: { perMinute: 60, burstSeconds: 10 } });
});
afterAll(async () => {
  await api?.close();
  dir.cleanup();
});

async function countAnswered(key: string, conditional: boolean): Promise<{ ok: number; notModified: number; limited: number }> {
  const first = await api.request.get('/api/v1/articles').set('X-API-Key', key);
  expect(first.status).toBe(200);
  const counts = { ok: 1, notModified: 0, limited: 0 };
  for (let i = 0; i < 30; i++) {
    const req = api.request.get('/api/v1/articles').set('X-API-Key', key);
    const res = await (conditional ? req.set('If-None-Match', first.headers.etag as string) : req);
    if (res.status === 200) counts.ok += 1;
    else if (res.status === 304) counts.notModified += 1;
    else if (res.status === 503 && res.body.error.code === 'rate_limited') counts.limited += 1;
  }
  return counts;
}

describe('the cost of a 304', () => {
  it('is half a request: a burst of 10 gives 10 full answers, or 1 and 17 revalidations (each checked at full cost, half given back)', async () => {
    const fetching = await countAnswered(addKey(dbPath, 'Refetching Partner').key, false);
    expect(fetching).toEqual({ ok: 10, notModified: 0, limited: 21 });
    const revalidating = await countAnswered(addKey(dbPath, 'Revalidating Partner').key, true);
    expect(revalidating).toEqual({ ok: 1, notModified: 17, limited: 13 });
  });

  it('gives back no more than was charged', () => {
    const limiter = new RateLimiter({ perMinute: 60, burstSeconds: 10, processes: 1 });
    const key = { id: 1, rateLimitPerMinute: null } as Parameters<RateLimiter['take']>[0];
    limiter.take(key, 1_000);
    // Refunds past a full bucket are lost: ten of them leave the burst at 10, not 14.
    for (let i = 0; i < 10; i++) limiter.refund(1, 0.5, 1_000);
    let accepted = 0;
    while (limiter.take(key, 1_000)?.allowed) accepted += 1;
    expect(accepted).toBe(10);
  });
});
