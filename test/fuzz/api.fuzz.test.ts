import fc from 'fast-check';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorSchema } from '../../src/http/contract/response-schemas.js';
import { revokeKey } from '../../src/keys/manage.js';
import { addKey, startApi, testClock, withKeys, type TestApi } from '../support/api.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { deepStrict, expectNoLeak } from '../support/contract-helpers.js';
import { anyValue, createClient, fuzzRuns, fuzzSeed, headers, method, queryString, segment, type FuzzRequest, type FuzzResponse } from './requests.js';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

/*
 * The API under generated requests, over real HTTP on loopback (keep-alive). Each generated
 * request that succeeds is sent again: the first answer came cold from Express, the second
 * comes warm from the response cache's fast path when cacheable, and the two must be the same.
 * Properties: never a 5xx, every 4xx in the JSON error shape with no-store, nothing internal
 * (stack, SQL, path) in a body, the partner's key in no body and no log line, no error logged.
 * A failure prints the seed and the shrunk request; FUZZ_SEED=<seed> replays it.
 */

const NOW = '2026-11-01T12:00:00Z';
const SEED = fuzzSeed();
const RUNS = fuzzRuns();
// Generous bounds for a busy CI machine; a quiet 2-core machine runs each route in well under a minute.
const TIMEOUT_MS = 300_000;
const dir = tempDir();
const dbPath = dir.path('snapshot.db');
const SECTIONS = ['fiber', 'ultrafast', 'markets'];
const SLUGS = ['hello', 'fiber-news', 'market-report', 'zh-only', 'a.b_c~d-e'];
let api: TestApi;
let client: ReturnType<typeof createClient>;
let keys: { valid: string; revoked: string };

beforeAll(async () => {
  const sections = SECTIONS.flatMap((slug, i) => [
    rawSection({ slug, name: `Section ${slug}`, position: i }),
    { ...rawSection({ slug, name: `分类 ${slug}`, position: i }), locale: 'zh' as const },
  ]);
  const articles = SLUGS.flatMap((slug, i) => [
    rawArticle({ slug, title: `Laser article ${i}`, section_slug: SECTIONS[i % 3]!, published_at: '2026-10-0' + (i + 1) + 'T08:00:00Z' }),
    rawArticle({ locale: 'zh', slug, title: `激光文章 ${i}`, section_slug: SECTIONS[i % 3]!, published_at: '2026-10-0' + (i + 1) + 'T08:00:00Z' }),
  ]);
  buildSnapshot(dbPath, { sections, articles, now: Date.parse(NOW) - 60_000 });
  const revoked = addKey(dbPath, 'Revoked Partner');
  withKeys(dbPath, (db) => revokeKey(db, revoked.id, () => Date.parse(NOW)));
  keys = { valid: addKey(dbPath, 'Fuzz Partner').key, revoked: revoked.key };
  // A rate limit on, so its headers are on every answer, but far above what the suite sends.
  api = await startApi({ databasePath: dbPath, clock: testClock(NOW), rateLimit: { perMinute: 100_000_000, burstSeconds: 60 } });
  client = createClient(api.url);
  // Printed so that any failure in this run can be replayed.
  console.info(`API fuzz: seed ${SEED}, ${RUNS} generated requests per route (FUZZ_SEED=${SEED} to replay)`);
});

afterAll(async () => {
  client.close();
  await api.close();
  dir.cleanup();
});

const strictError = deepStrict(errorSchema);
// Headers that differ between two answers by design.
const VOLATILE = /^(date|x-request-id|connection|keep-alive|ratelimit.*|retry-after)$/i;

function describeRequest(req: FuzzRequest): string {
  return `${req.method} ${req.path.slice(0, 300)} ${JSON.stringify(req.headers).slice(0, 300)}`;
}

// The contract's own 503s for a key at its share (search_busy, rate_limited): an answer, not
// a failure, but counted so that a suite answered mostly by them fails (it would test nothing).
let throttled = 0;
function isThrottled(res: FuzzResponse): boolean {
  if (res.status !== 503 || res.headers['retry-after'] === undefined) return false;
  // A HEAD answer has no body to tell; its GET twin is checked in full.
  if (res.body.length === 0) return true;
  const code = (JSON.parse(res.body.toString('utf8') || '{}') as { error?: { code?: string } }).error?.code;
  return code === 'rate_limited' || code === 'search_busy';
}

/** The properties every answer must hold. Throws (vitest expect) on a violation. */
function checkAnswer(req: FuzzRequest, res: FuzzResponse, options: { storeDown?: boolean } = {}): void {
  const what = describeRequest(req);
  // Compressed when the generated Accept-Encoding asked for it (src/http/cache/encoding.ts); a
  // HEAD answer carries the header of its GET and no body.
  const coding = res.body.length === 0 ? undefined : res.headers['content-encoding'];
  const body = coding === 'gzip' ? gunzipSync(res.body) : coding === 'br' ? brotliDecompressSync(res.body) : res.body;
  const text = body.toString('utf8');
  if (!options.storeDown && isThrottled(res)) {
    throttled += 1;
  } else if (options.storeDown && res.status >= 500) {
    expect(res.status, what).toBe(503);
  } else {
    expect(res.status, `${what} -> ${res.status} ${text.slice(0, 200)}`).toBeLessThan(500);
  }
  expect(text.includes(keys.valid) || text.includes(keys.valid.slice(4)), what).toBe(false);
  if (res.status >= 400) {
    expect(res.headers['cache-control'], what).toBe('no-store');
    if (req.method !== 'HEAD') {
      expect(res.headers['content-type'], what).toMatch(/^application\/json/);
      const body = JSON.parse(text) as unknown;
      // /health's 503 is its own document, carrying the same error object.
      const error = req.path.startsWith('/health') && res.status === 503 ? { error: (body as { error: unknown }).error } : body;
      strictError.parse(error);
      // The engine's name (`sqlite`) is part of /health's document; its error must not leak.
      expectNoLeak(JSON.stringify(error).replace('valid SQLite database', 'valid database'));
      if (options.storeDown && res.status === 503) expect((error as { error: { code: string } }).error.code).toBe('service_unavailable');
    }
  } else if (res.status === 200 && req.method !== 'HEAD') {
    expect(res.headers['content-type'], what).toMatch(/^application\/json/);
    JSON.parse(text);
  }
}

function comparable(res: FuzzResponse): unknown {
  const headers = Object.entries(res.headers).filter(([name]) => !VOLATILE.test(name)).sort(([a], [b]) => a.localeCompare(b));
  return { status: res.status, headers, body: res.body.toString('base64') };
}

/** New log lines since the last look: no key, no stack, nothing at error level. */
let logsSeen = 0;
function checkLogs(what: string): void {
  const fresh = api.logs.slice(logsSeen);
  logsSeen = api.logs.length;
  for (const line of fresh) {
    expect(line.includes(keys.valid) || line.includes(keys.valid.slice(4)) || line.includes(keys.revoked.slice(4)), `${what}: key in ${line.slice(0, 200)}`).toBe(false);
    expect(line, what).not.toMatch(/\\n\s+at |"stack"|SQLITE_|\bSELECT\b.*\bFROM\b/);
    expect((JSON.parse(line) as { level: number }).level, `${what}: ${line.slice(0, 300)}`).toBeLessThan(50);
  }
  // Keep memory flat over tens of thousands of requests.
  if (api.logs.length > 5_000) {
    api.logs.splice(0, api.logs.length);
    logsSeen = 0;
  }
}

async function fuzzRoute(requests: fc.Arbitrary<FuzzRequest>, seedOffset: number): Promise<void> {
  throttled = 0;
  await fc.assert(
    fc.asyncProperty(requests, async (req) => {
      const first = await client.send(req);
      checkAnswer(req, first);
      // Only a successful read can be cached and so answered by the fast path next time;
      // every error is Express's in both cases.
      if ((first.status === 200 || first.status === 304) && (req.method === 'GET' || req.method === 'HEAD')) {
        const second = await client.send(req);
        checkAnswer(req, second);
        if (!isThrottled(second)) {
          expect(comparable(second), `cold and warm answers differ for ${describeRequest(req)}`).toEqual(comparable(first));
        }
      }
      checkLogs(describeRequest(req));
    }),
    { seed: SEED + seedOffset, numRuns: RUNS, endOnFailure: true },
  );
  expect(throttled, 'most answers were rate_limited or search_busy: give the fuzz key a higher limit').toBeLessThan(RUNS / 2);
}

const VALID = {
  locale: fc.constantFrom('en', 'zh'),
  page: fc.integer({ min: 1, max: 4 }).map(String),
  limit: fc.integer({ min: 1, max: 50 }).map(String),
  section: fc.constantFrom(...SECTIONS, 'unknown-section'),
  q: fc.constantFrom('laser', '激光', 'article', 'laser article', 'fiber'),
  updated_since: fc.constantFrom('2026-01-01T00:00:00Z', '2026-10-01T08:00:00+08:00'),
};

const request = (path: fc.Arbitrary<string>, query: fc.Arbitrary<string>): fc.Arbitrary<FuzzRequest> =>
  fc.record({ method, path: fc.tuple(path, query).map(([p, q]) => p + q), headers: headers(keys) });

describe('API fuzzing (fast-check, real HTTP)', () => {
  it('GET /api/v1/articles holds every property under generated requests', async () => {
    await fuzzRoute(request(fc.constant('/api/v1/articles'), queryString(['locale', 'page', 'limit', 'section', 'updated_since'], VALID)), 1);
  }, TIMEOUT_MS);

  it('GET /api/v1/articles/{slug} holds every property under generated requests', async () => {
    await fuzzRoute(request(segment(SLUGS).map((s) => `/api/v1/articles/${s}`), queryString(['locale'], VALID)), 2);
  }, TIMEOUT_MS);

  it('GET /api/v1/categories holds every property under generated requests', async () => {
    await fuzzRoute(request(fc.constant('/api/v1/categories'), queryString(['locale'], VALID)), 3);
  }, TIMEOUT_MS);

  it('GET /api/v1/search holds every property under generated requests', async () => {
    await fuzzRoute(request(fc.constant('/api/v1/search'), queryString(['q', 'locale', 'page', 'limit', 'section'], VALID)), 4);
  }, TIMEOUT_MS);

  it('other paths (health, OpenAPI, unknown, odd shapes) hold every property under generated requests', async () => {
    const path = fc.oneof(
      fc.constantFrom('/health', '/api/v1/openapi.json', '/', '/api', '/api/v1', '/api/v1/', '/api/v2/articles', '/API/V1/ARTICLES', '//api/v1/articles', '/api/v1//articles', '/api/v1/articles/hello/extra', '/api/v1/articles/', '/favicon.ico', '/.env', '/api/v1/../../etc/passwd'),
      fc.array(segment(['api', 'v1', 'articles', 'search', 'categories', 'health']), { minLength: 1, maxLength: 5 }).map((parts) => `/${parts.join('/')}`),
    );
    await fuzzRoute(request(path, queryString(['locale', 'q', 'page'], VALID)), 5);
  }, TIMEOUT_MS);
});

describe('API fuzzing with the store down', () => {
  it('answers only 4xx or 503 service_unavailable, in the JSON shape, when the snapshot is gone', async () => {
    const downDir = tempDir();
    const downPath = downDir.path('down.db');
    buildSnapshot(downPath, { sections: [], articles: [] });
    const down = await startApi({ databasePath: downPath, clock: testClock(NOW) });
    // The file vanishes under the running API: an induced store failure.
    rmSync(downPath);
    const downClient = createClient(down.url);
    try {
      const path = fc.constantFrom('/api/v1/articles', '/api/v1/articles/hello', '/api/v1/categories', '/api/v1/search', '/health', '/nope', '/api/v1/nope');
      await fc.assert(
        fc.asyncProperty(
          fc.record({ method, path: fc.tuple(path, queryString(['locale', 'q', 'page'], VALID)).map(([p, q]) => p + q), headers: headers(keys) }),
          async (req) => checkAnswer(req, await downClient.send(req), { storeDown: true }),
        ),
        { seed: SEED + 6, numRuns: Math.max(100, Math.round(RUNS / 5)), endOnFailure: true },
      );
      for (const line of down.logs) expect(line).not.toContain(keys.valid.slice(4));
    } finally {
      downClient.close();
      await down.close();
      downDir.cleanup();
    }
  }, TIMEOUT_MS);
});

// Keep the value generator honest: it must reach the shapes the suite claims to cover.
describe('the request generator', () => {
  it('produces control characters, non-BMP Unicode and values of several kilobytes', () => {
    const samples = fc.sample(anyValue, { seed: SEED, numRuns: 5_000 });
    expect(samples.some((s) => /[\u0000-\u001f]/.test(s))).toBe(true);
    expect(samples.some((s) => /[\u{10000}-\u{10ffff}]/u.test(s))).toBe(true);
    expect(samples.some((s) => s.length >= 2_000)).toBe(true);
  });
});
