import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorSchema } from '../../../src/http/contract/response-schemas.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { deepStrict, expectError, expectNoLeak, isoPlus, MINUTE } from '../../support/contract-helpers.js';

const NOW = '2026-11-01T12:00:00Z';
const dir = tempDir();
const dbPath = dir.path('snapshot.db');
let api: TestApi;
let key: string;

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber', name: 'Fiber' })],
    articles: [rawArticle({ slug: 'hello', title: 'Laser hello', section_slug: 'fiber', published_at: isoPlus(NOW, -MINUTE) })],
  });
  key = addKey(dbPath).key;
  api = await startApi({ databasePath: dbPath, clock: testClock(NOW) });
});

afterAll(async () => {
  await api.close();
  dir.cleanup();
});

/** A raw request, for paths and methods a client library would normalize or refuse. */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  const url = new URL(api.url);
  return new Promise<{ status: number; headers: Record<string, string>; text: string; body: unknown }>((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers as Record<string, string>, text, body: parsed });
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const PATHS = ['/api/v1/articles', '/api/v1/articles/hello', '/api/v1/categories', '/api/v1/search?q=laser', '/health', '/api/v1/openapi.json', '/nope', '/'];
const WRITES = ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];

describe('methods other than GET and HEAD', () => {
  it.each(WRITES)('%s answers 405 method_not_allowed in JSON with Allow: GET, HEAD, on every path', async (method) => {
    for (const path of PATHS) {
      for (const headers of [{}, { 'X-API-Key': key }] as Record<string, string>[]) {
        const res = await raw(method, path, headers);
        expectError(res, 405, 'method_not_allowed');
        expect(res.headers.allow, `${method} ${path}`).toBe('GET, HEAD');
        expect(res.body).toEqual({ error: { code: 'method_not_allowed', message: expect.stringContaining(method) } });
      }
    }
  });

  it('answers 405 in JSON even with a request body, malformed JSON included', async () => {
    for (const body of ['{"title": "x"}', '{not json', 'a=b&c=d']) {
      const res = await raw('POST', '/api/v1/articles', { 'Content-Type': 'application/json', 'X-API-Key': key }, body);
      expectError(res, 405, 'method_not_allowed');
    }
    const cors = await raw('OPTIONS', '/api/v1/articles', { Origin: 'https://partner.example', 'Access-Control-Request-Method': 'GET' });
    expectError(cors, 405, 'method_not_allowed');
  });
});

describe('unknown paths', () => {
  it('answer 404 not_found in JSON outside /api/v1, without a key', async () => {
    for (const path of ['/nope', '/', '/api', '/api/v2/articles', '/articles', '/health/extra']) {
      expectError(await raw('GET', path), 404, 'not_found');
    }
  });

  it('check the key first under /api/v1: no key is a 401, a valid key gets the 404', async () => {
    for (const path of ['/api/v1', '/api/v1/', '/api/v1/nope', '/api/v1/articles/hello/extra', '/api/v1/sections']) {
      expectError(await raw('GET', path), 401, 'missing_api_key');
      expectError(await raw('GET', path, { 'X-API-Key': key }), 404, 'not_found');
    }
  });

  it('answer 404 for an unknown article slug, naming nothing internal', async () => {
    const res = await raw('GET', '/api/v1/articles/no-such-article', { 'X-API-Key': key });
    expectError(res, 404, 'not_found');
  });
});

describe('malformed requests', () => {
  it('answers a malformed percent-encoded path with a 400 in JSON, no HTML and no stack', async () => {
    for (const path of ['/api/v1/articles/%E0%A4%A', '/api/v1/articles/%', '/api/v1/articles/%zz', '/api/v1/articles/%C0%80']) {
      const res = await raw('GET', path, { 'X-API-Key': key });
      expectError(res, 400, 'invalid_parameter', 'slug');
      expect(res.text).not.toContain(path);
    }
  });

  it('checks the key before decoding the path', async () => {
    expectError(await raw('GET', '/api/v1/articles/%E0%A4%A'), 401, 'missing_api_key');
  });

  it('answers a malformed query string as a parameter problem, never a 500', async () => {
    // Query strings are decoded leniently (a stray % stays a %), so the values are judged as
    // parameters: bad ones are 400s naming the parameter, unknown ones are ignored.
    const cases: [string, number, string?][] = [
      ['q=laser&limit=%', 400, 'limit'],
      ['q=laser&limit=%zz', 400, 'limit'],
      ['q=laser&locale=%FF', 400, 'locale'],
      ['q=laser&%=1', 200],
      ['q=%E0%A4%A', 200],
      ['q=%', 400, 'q'],
    ];
    for (const [query, status, param] of cases) {
      const res = await raw('GET', `/api/v1/search?${query}`, { 'X-API-Key': key });
      if (param) expectError(res, status, 'invalid_parameter', param);
      else expect(res.status, query).toBe(status);
      expectNoLeak(res.text);
    }
  });
});

describe('security headers', () => {
  it('sends helmet headers on success and on errors, and no X-Powered-By', async () => {
    const responses = [
      await raw('GET', '/api/v1/articles', { 'X-API-Key': key }),
      await raw('GET', '/api/v1/articles'),
      await raw('GET', '/nope'),
      await raw('POST', '/api/v1/articles'),
      await raw('GET', '/health'),
    ];
    for (const res of responses) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
      expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
      expect(res.headers['x-powered-by']).toBeUndefined();
    }
  });
});

describe('every error response', () => {
  it('is { error: { code, message[, param] } }, no-store, and leaks no stack, SQL or path', async () => {
    const produced = [
      await raw('GET', '/api/v1/articles?limit=0', { 'X-API-Key': key }),
      await raw('GET', '/api/v1/articles?page=abc&page=1', { 'X-API-Key': key }),
      await raw('GET', '/api/v1/search', { 'X-API-Key': key }),
      await raw('GET', '/api/v1/search?q=x', { 'X-API-Key': key }),
      await raw('GET', '/api/v1/categories?locale=fr', { 'X-API-Key': key }),
      await raw('GET', '/api/v1/articles'),
      await raw('GET', '/api/v1/articles', { 'X-API-Key': 'lsk_nope' }),
      await raw('GET', '/api/v1/articles/zzz', { 'X-API-Key': key }),
      await raw('GET', '/api/v1/articles/%E0%A4%A', { 'X-API-Key': key }),
      await raw('GET', '/nope'),
      await raw('DELETE', '/api/v1/articles/hello', { 'X-API-Key': key }),
    ];
    const strict = deepStrict(errorSchema);
    for (const res of produced) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      strict.parse(res.body);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expectNoLeak(res.text);
      expect(res.text).not.toContain(dir.dir);
    }
  });
});
