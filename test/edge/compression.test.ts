import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { promisify } from 'node:util';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseCoding, encodedBody, MIN_COMPRESSED_BYTES } from '../../src/http/cache/encoding.js';
import { represent } from '../../src/http/cache/representation.js';
import { addKey, startApi, type TestApi } from '../support/api.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';

/*
 * Compressed answers, checked with real clients on a real server (both the fast path and
 * Express answer: the first request of each path goes through Express, the next ones through
 * the fast path): gzip or brotli as asked, never for a small body, one ETag per coding,
 * Vary: Accept-Encoding, HEAD and 304 consistent with GET; curl --compressed and undici
 * (Node's fetch) read them.
 */

const dir = tempDir('compression-');
const dbPath = dir.path('snapshot.db');
let api: TestApi;
let key: string;

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber' })],
    articles: Array.from({ length: 30 }, (_, i) =>
      rawArticle({ slug: `story-${i}`, title: `Laser story ${i}`, section_slug: 'fiber', published_at: `2026-10-${String(i + 1).padStart(2, '0')}T08:00:00Z` }),
    ),
  });
  api = await startApi({ databasePath: dbPath });
  key = addKey(dbPath, 'Compression Partner').key;
});
afterAll(async () => {
  await api?.close();
  dir.cleanup();
});

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A request with exactly these headers (no client default adds Accept-Encoding), body as sent. */
function raw(path: string, headers: Record<string, string>, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${api.url}${path}`, { method, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.once('error', reject);
    req.end();
  });
}

const LIST = '/api/v1/articles?limit=30';

describe('Accept-Encoding', () => {
  it('picks the coding by q-value, brotli on a tie, none when refused or not offered', () => {
    expect(chooseCoding(undefined)).toBeUndefined();
    expect(chooseCoding('')).toBeUndefined();
    expect(chooseCoding('identity')).toBeUndefined();
    expect(chooseCoding('gzip')).toBe('gzip');
    expect(chooseCoding('x-gzip')).toBe('gzip');
    expect(chooseCoding('gzip, deflate, br, zstd')).toBe('br');
    expect(chooseCoding('br;q=0.5, gzip')).toBe('gzip');
    expect(chooseCoding('gzip;q=0.2, br;q=0.9')).toBe('br');
    expect(chooseCoding('GZIP ; Q=0.5')).toBe('gzip');
    expect(chooseCoding('gzip;q=0, br;q=0')).toBeUndefined();
    expect(chooseCoding('*')).toBe('br');
    expect(chooseCoding('*;q=0, gzip')).toBe('gzip');
    expect(chooseCoding('br;q=0, *')).toBe('gzip');
    expect(chooseCoding('gzip;q=2')).toBeUndefined();
    expect(chooseCoding('gzip;q=abc')).toBeUndefined();
    expect(chooseCoding('deflate')).toBeUndefined();
  });

  it('compresses a body once per coding, and keeps it', () => {
    const rep = represent({ items: Array.from({ length: 100 }, (_, i) => ({ i, text: 'laser '.repeat(10) })) });
    const first = encodedBody(rep, 'gzip');
    expect(encodedBody(rep, 'gzip')).toBe(first);
    expect(gunzipSync(first).equals(rep.body)).toBe(true);
    expect(brotliDecompressSync(encodedBody(rep, 'br')).equals(rep.body)).toBe(true);
    expect(encodedBody(rep, undefined)).toBe(rep.body);
  });
});

describe('compressed answers', () => {
  it('sends gzip and brotli as asked, the same content, with their own ETags and Vary: Accept-Encoding (Express, then the fast path)', async () => {
    const headers = { 'X-API-Key': key };
    // Twice each: the first fills the response cache (Express), the second is the fast path's.
    for (let round = 0; round < 2; round++) {
      const plain = await raw(LIST, headers);
      const gzip = await raw(LIST, { ...headers, 'Accept-Encoding': 'gzip' });
      const br = await raw(LIST, { ...headers, 'Accept-Encoding': 'gzip, deflate, br' });
      expect(plain.body.length).toBeGreaterThan(MIN_COMPRESSED_BYTES);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(gzip.headers['content-encoding']).toBe('gzip');
      expect(br.headers['content-encoding']).toBe('br');
      expect(gunzipSync(gzip.body).equals(plain.body)).toBe(true);
      expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
      expect(gzip.body.length).toBeLessThan(plain.body.length / 3);
      expect(Number(gzip.headers['content-length'])).toBe(gzip.body.length);
      const etag = plain.headers.etag as string;
      expect(gzip.headers.etag).toBe(`${etag.slice(0, -1)}-gz"`);
      expect(br.headers.etag).toBe(`${etag.slice(0, -1)}-br"`);
      for (const res of [plain, gzip, br]) expect(res.headers.vary).toBe('X-API-Key, Accept-Encoding');
    }
  });

  it('answers HEAD with the headers of GET, and 304 only to the ETag of the coding asked for', async () => {
    const asked = { 'X-API-Key': key, 'Accept-Encoding': 'gzip' };
    const get = await raw(LIST, asked);
    const head = await raw(LIST, asked, 'HEAD');
    expect(head.body.length).toBe(0);
    for (const name of ['etag', 'content-encoding', 'content-length', 'vary']) expect(head.headers[name], name).toBe(get.headers[name]);
    const revalidated = await raw(LIST, { ...asked, 'If-None-Match': get.headers.etag as string });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.etag).toBe(get.headers.etag);
    expect(revalidated.headers.vary).toBe('X-API-Key, Accept-Encoding');
    // The gzip copy's tag does not stand for the identity representation, and back.
    const identity = await raw(LIST, { 'X-API-Key': key, 'If-None-Match': get.headers.etag as string });
    expect(identity.status).toBe(200);
    expect(identity.headers['content-encoding']).toBeUndefined();
  });

  it('never compresses a small answer, nor an error', async () => {
    const small = await raw('/api/v1/categories', { 'X-API-Key': key, 'Accept-Encoding': 'gzip, br' });
    expect(small.status).toBe(200);
    expect(small.body.length).toBeLessThan(MIN_COMPRESSED_BYTES);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.headers.vary).toBe('X-API-Key');
    const refused = await raw(LIST, { 'Accept-Encoding': 'gzip, br' });
    expect(refused.status).toBe(401);
    expect(refused.headers['content-encoding']).toBeUndefined();
  });

  it('lets shared caches keep the OpenAPI document (no key, no Vary: X-API-Key), compressed', async () => {
    const doc = await raw('/api/v1/openapi.json', { 'Accept-Encoding': 'br' });
    expect(doc.status).toBe(200);
    expect(doc.headers['cache-control']).toBe('public, max-age=300');
    expect(doc.headers.vary).toBe('Accept-Encoding');
    expect(doc.headers['content-encoding']).toBe('br');
    expect(JSON.parse(brotliDecompressSync(doc.body).toString('utf8'))).toHaveProperty('openapi', '3.1.0');
  });

  it('compresses the /docs script bundle, not its image', async () => {
    const bundle = await raw('/docs/assets/swagger-ui-bundle.js', { 'Accept-Encoding': 'gzip' });
    expect(bundle.headers['content-encoding']).toBe('gzip');
    expect(bundle.headers['cache-control']).toBe('public, max-age=3600');
    expect(bundle.headers.vary).toBe('Accept-Encoding');
    const plain = await raw('/docs/assets/swagger-ui-bundle.js', {});
    expect(gunzipSync(bundle.body).equals(plain.body)).toBe(true);
    expect(bundle.body.length).toBeLessThan(plain.body.length / 2);
    const icon = await raw('/docs/assets/favicon-32x32.png', { 'Accept-Encoding': 'gzip' });
    expect(icon.headers['content-encoding']).toBeUndefined();
  });
});

describe('real clients', () => {
  it('curl --compressed reads a brotli answer', async () => {
    const { stdout } = await promisify(execFile)('curl', ['-sS', '--compressed', '-H', `X-API-Key: ${key}`, '-D', '-', `${api.url}${LIST}`], {
      maxBuffer: 8 * 1024 * 1024,
    });
    const [head, body] = stdout.split('\r\n\r\n');
    expect(head).toMatch(/content-encoding: (br|gzip)/i);
    expect((JSON.parse(body!) as { data: unknown[] }).data).toHaveLength(30);
  });

  it("undici (Node's fetch) reads a compressed answer and revalidates it with a 304", async () => {
    const first = await fetch(`${api.url}${LIST}`, { headers: { 'X-API-Key': key } });
    expect(first.headers.get('content-encoding')).toMatch(/^(br|gzip)$/);
    expect(((await first.json()) as { data: unknown[] }).data).toHaveLength(30);
    const again = await fetch(`${api.url}${LIST}`, { headers: { 'X-API-Key': key, 'If-None-Match': first.headers.get('etag')! } });
    expect(again.status).toBe(304);
  });
});
