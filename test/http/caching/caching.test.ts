import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWriter } from '../../../src/db/sqlite/connection.js';
import { ResponseCache, CACHE_CONTROL } from '../../../src/http/cache/representation.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir, writeSnapshot, type SnapshotContent } from '../../support/snapshot-fixture.js';
import { expectError, isoPlus, MINUTE } from '../../support/contract-helpers.js';

const NOW = '2026-11-01T12:00:00Z';
const SYNCED = isoPlus(NOW, -120 * MINUTE);
const NEWEST = isoPlus(NOW, -10 * MINUTE);
/** The newest exposed article is younger than the sync: it is what last changed. */
const LAST_MODIFIED = new Date(NEWEST).toUTCString();

const dir = tempDir();
const dbPath = dir.path('snapshot.db');
const clock = testClock(NOW);
let api: TestApi;
let key: string;

// Every field fixed (rawArticle numbers its defaults), so the same call gives the same content.
const fixed = { excerpt: 'A fixed excerpt.', body_markdown: 'A fixed body about lasers.', updated_at: NEWEST };
const content = (title: string, now = Date.parse(SYNCED)): SnapshotContent => ({
  sections: [
    rawSection({ id: 'sec-fiber', slug: 'fiber', name: 'Fiber', description: null, position: 1, updated_at: '2026-10-01T08:00:00Z' }),
    { ...rawSection({ id: 'sec-zh', slug: 'fiber', name: '光纤', description: null, position: 1, updated_at: '2026-10-01T08:00:00Z' }), locale: 'zh' },
  ],
  articles: [
    rawArticle({ ...fixed, id: 'a-1', slug: 'newest', title, section_slug: 'fiber', published_at: NEWEST }),
    rawArticle({ ...fixed, id: 'a-2', slug: 'older', title: 'Older laser story', section_slug: 'fiber', published_at: isoPlus(NOW, -60 * MINUTE) }),
    rawArticle({ ...fixed, id: 'z-1', locale: 'zh', slug: 'zh-1', title: '激光新闻', section_slug: 'fiber', published_at: NEWEST }),
  ],
  now,
});

beforeAll(async () => {
  buildSnapshot(dbPath, content('Newest laser story'));
  key = addKey(dbPath).key;
  api = await startApi({ databasePath: dbPath, clock });
});

afterAll(async () => {
  await api.close();
  dir.cleanup();
});

const ENDPOINTS = ['/api/v1/articles', '/api/v1/articles/newest', '/api/v1/categories', '/api/v1/search?q=laser'];

const get = (path: string, target: TestApi = api) => target.request.get(path).set('X-API-Key', key);

describe('success responses', () => {
  it('say public, max-age=300 for partners, s-maxage=0 with proxy-revalidate for shared caches, Vary: X-API-Key, a strong ETag and Last-Modified', async () => {
    for (const path of ENDPOINTS) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers['cache-control']).toBe(CACHE_CONTROL);
      expect(res.headers.vary).toMatch(/(^|,\s*)X-API-Key(\s*,|$)/i);
      expect(res.headers.etag).toMatch(/^"[^"\s]+"$/);
      expect(res.headers['last-modified']).toBe(LAST_MODIFIED);
    }
  });

  it('give Last-Modified as the sync time when the sync is newer than every article', async () => {
    const other = tempDir();
    const path = other.path('later.db');
    const syncedLater = isoPlus(NOW, -1 * MINUTE);
    buildSnapshot(path, content('Same story', Date.parse(syncedLater)));
    const otherKey = addKey(path).key;
    const second = await startApi({ databasePath: path, clock });
    try {
      const res = await second.request.get('/api/v1/articles').set('X-API-Key', otherKey);
      expect(res.headers['last-modified']).toBe(new Date(syncedLater).toUTCString());
    } finally {
      await second.close();
      other.cleanup();
    }
  });
});

describe('conditional requests', () => {
  it('answer 304 with no body to If-None-Match with the current ETag', async () => {
    for (const path of ENDPOINTS) {
      const first = await get(path);
      const res = await get(path).set('If-None-Match', first.headers.etag as string);
      expect(res.status, path).toBe(304);
      expect(res.text ?? '').toBe('');
      expect(res.headers['content-length'] ?? '0').toBe('0');
      expect(res.headers.etag).toBe(first.headers.etag);
      expect(res.headers['cache-control']).toBe(CACHE_CONTROL);
    }
  });

  it('answer 304 when the current ETag is one of a list, or sent in its weak form', async () => {
    for (const path of ENDPOINTS) {
      const etag = (await get(path)).headers.etag as string;
      expect((await get(path).set('If-None-Match', `"stale-1", ${etag}, "stale-2"`)).status, path).toBe(304);
      expect((await get(path).set('If-None-Match', `W/${etag}`)).status, path).toBe(304);
      expect((await get(path).set('If-None-Match', `"other",W/${etag}`)).status, path).toBe(304);
    }
  });

  it('answer 200 with the body to a stale ETag', async () => {
    for (const path of ENDPOINTS) {
      const fresh = await get(path);
      const res = await get(path).set('If-None-Match', '"not-the-current-etag"');
      expect(res.status, path).toBe(200);
      expect(res.body).toEqual(fresh.body);
      // The ETag of one endpoint does not validate another.
      const otherPath = ENDPOINTS.find((p) => p !== path) as string;
      const other = await get(otherPath).set('If-None-Match', fresh.headers.etag as string);
      expect(other.status).toBe(200);
    }
  });

  it('answer 304 to If-Modified-Since at or after Last-Modified, 200 before it', async () => {
    const lastModified = Date.parse(NEWEST);
    for (const path of ENDPOINTS) {
      const at = await get(path).set('If-Modified-Since', new Date(lastModified).toUTCString());
      expect(at.status, path).toBe(304);
      expect(at.text ?? '').toBe('');
      const after = await get(path).set('If-Modified-Since', new Date(lastModified + 3_600_000).toUTCString());
      expect(after.status, path).toBe(304);
      const before = await get(path).set('If-Modified-Since', new Date(lastModified - 1000).toUTCString());
      expect(before.status, path).toBe(200);
      expect(before.body).toHaveProperty('data');
      const garbage = await get(path).set('If-Modified-Since', 'yesterday-ish');
      expect(garbage.status, path).toBe(200);
    }
  });

  it('let If-None-Match take precedence over If-Modified-Since', async () => {
    for (const path of ENDPOINTS) {
      const res = await get(path)
        .set('If-None-Match', '"stale"')
        .set('If-Modified-Since', new Date(Date.parse(NOW) + 3_600_000).toUTCString());
      expect(res.status, path).toBe(200);
    }
  });

  it('never turn an error into a 304', async () => {
    const res = await get('/api/v1/articles/nope').set('If-None-Match', '*').set('If-Modified-Since', new Date().toUTCString());
    expectError(res, 404, 'not_found');
  });
});

describe('error responses', () => {
  it('say Cache-Control: no-store', async () => {
    expectError(await get('/api/v1/articles?limit=0'), 400, 'invalid_parameter', 'limit');
    expectError(await api.request.get('/api/v1/articles'), 401, 'missing_api_key');
    expectError(await get('/api/v1/articles/nope'), 404, 'not_found');
    expectError(await api.request.post('/api/v1/articles').set('X-API-Key', key), 405, 'method_not_allowed');
  });
});

describe('ETag stability', () => {
  it('is the same for the same content in two API processes over the same file', async () => {
    const second = await startApi({ databasePath: dbPath, clock });
    try {
      for (const path of [...ENDPOINTS, '/api/v1/articles?locale=zh', '/api/v1/categories?locale=zh']) {
        const a = await get(path);
        const b = await get(path, second);
        expect(b.headers.etag, path).toBe(a.headers.etag);
        expect(b.headers['last-modified'], path).toBe(a.headers['last-modified']);
        expect(b.text).toBe(a.text);
        expect((await get(path, second).set('If-None-Match', a.headers.etag as string)).status).toBe(304);
      }
    } finally {
      await second.close();
    }
  });

  it('changes when the content changes under a running API, and stays when it does not', async () => {
    const other = tempDir();
    const path = other.path('changing.db');
    buildSnapshot(path, content('First title'));
    const otherKey = addKey(path).key;
    const running = await startApi({ databasePath: path, clock });
    const fetch = (p: string) => running.request.get(p).set('X-API-Key', otherKey);
    try {
      const before = new Map<string, { etag: string; text: string }>();
      const all = [...ENDPOINTS, '/api/v1/articles?locale=zh', '/api/v1/categories?locale=zh'];
      for (const p of all) {
        const res = await fetch(p);
        before.set(p, { etag: res.headers.etag as string, text: res.text });
      }

      // A sync through the worker's own write path, while the API keeps its connection.
      const resynced = isoPlus(NOW, -1 * MINUTE);
      const db = openWriter(path, { busyTimeoutMs: 5_000 });
      try {
        writeSnapshot(db, content('Second laser title', Date.parse(resynced)));
      } finally {
        db.$client.close();
      }

      const changed = ENDPOINTS.filter((p) => !p.includes('categories'));
      for (const p of changed) {
        const res = await fetch(p).set('If-None-Match', before.get(p)!.etag);
        expect(res.status, p).toBe(200);
        expect(res.headers.etag, p).not.toBe(before.get(p)!.etag);
        expect(res.headers['last-modified'], p).toBe(new Date(resynced).toUTCString());
      }
      expect((await fetch('/api/v1/articles/newest')).body.data.title).toBe('Second laser title');
      // The sections did not change, nor did anything in zh: same bytes, same ETag, still a 304.
      for (const p of ['/api/v1/categories', '/api/v1/articles?locale=zh', '/api/v1/categories?locale=zh']) {
        const res = await fetch(p);
        expect(res.text, p).toBe(before.get(p)!.text);
        expect(res.headers.etag, p).toBe(before.get(p)!.etag);
        expect((await fetch(p).set('If-None-Match', before.get(p)!.etag)).status, p).toBe(304);
      }
    } finally {
      await running.close();
      other.cleanup();
    }
  });
});

describe('HEAD', () => {
  const compared = ['etag', 'cache-control', 'vary', 'last-modified', 'content-type', 'content-length'];

  it('works on every GET endpoint with the same headers and no body', async () => {
    const paths = [...ENDPOINTS, '/health', '/api/v1/openapi.json'];
    for (const path of paths) {
      const got = await get(path);
      // The same Accept-Encoding as supertest's GET: the same representation (and ETag).
      const head = await api.request.head(path).set('X-API-Key', key).set('Accept-Encoding', 'gzip, deflate');
      expect(head.status, path).toBe(200);
      expect(got.status, path).toBe(200);
      for (const name of compared) expect(head.headers[name], `${path} ${name}`).toBe(got.headers[name]);
      // GET's Content-Length: of the body as sent (compressed when large enough).
      expect(head.headers['content-length']).toBe(got.headers['content-length'] ?? String(Buffer.byteLength(got.text)));
      expect(head.text ?? '').toBe('');
    }
  });

  it('answers 304 to a conditional HEAD and refuses a HEAD without a key', async () => {
    const etag = (await get('/api/v1/categories')).headers.etag as string;
    const res = await api.request.head('/api/v1/categories').set('X-API-Key', key).set('If-None-Match', etag);
    expect(res.status).toBe(304);
    const anonymous = await api.request.head('/api/v1/categories');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['cache-control']).toBe('no-store');
    expect(anonymous.text ?? '').toBe('');
  });
});

describe('the response cache counts', () => {
  it('each request once, and keeps an answer on its second request: a first request is a miss kept nowhere, a second a miss kept, a third a hit, on every cached endpoint', async () => {
    const cache = new ResponseCache(8 * 1024 * 1024);
    const counted = await startApi({ databasePath: dbPath, clock, responseCache: cache });
    try {
      const paths = ['/api/v1/articles?limit=3', '/api/v1/articles/older', '/api/v1/categories?locale=zh', '/api/v1/changes?limit=5', '/api/v1/search?q=older'];
      for (const path of paths) expect((await get(path, counted)).status, path).toBe(200);
      expect(cache.stats()).toMatchObject({ hits: 0, misses: paths.length, entries: 0 });
      for (const path of paths) expect((await get(path, counted)).status, path).toBe(200);
      expect(cache.stats()).toMatchObject({ hits: 0, misses: 2 * paths.length, entries: paths.length });
      for (const path of paths) expect((await get(path, counted)).status, path).toBe(200);
      expect(cache.stats()).toMatchObject({ hits: paths.length, misses: 2 * paths.length, entries: paths.length });
    } finally {
      await counted.close();
    }
  });

  it('never-repeated requests take no room: 300 distinct unknown sections leave the cache empty and a repeated page kept', async () => {
    const cache = new ResponseCache(8 * 1024 * 1024);
    const counted = await startApi({ databasePath: dbPath, clock, responseCache: cache });
    try {
      for (let i = 0; i < 2; i++) expect((await get('/api/v1/articles?limit=2', counted)).status).toBe(200);
      for (let i = 0; i < 300; i++) expect((await get(`/api/v1/articles?section=nowhere-${i}`, counted)).status).toBe(200);
      expect(cache.stats()).toMatchObject({ entries: 1 });
      const before = cache.stats().hits;
      expect((await get('/api/v1/articles?limit=2', counted)).status).toBe(200);
      expect(cache.stats().hits).toBe(before + 1);
    } finally {
      await counted.close();
    }
  });
});
