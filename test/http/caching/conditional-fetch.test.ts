import { CACHE_CONTROL } from '../../../src/http/cache/representation.js';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { isoPlus, MINUTE } from '../../support/contract-helpers.js';

/*
 * Conditional requests as real clients send them: Node's own fetch (which adds
 * `Cache-Control: no-cache` to any request carrying If-None-Match) and raw HTTP/1.1 bytes on
 * a socket, as curl sends them. Each case runs on two servers: one with the response cache,
 * where a repeated request is answered by the fast path, and one without, where Express
 * answers every request.
 */

const NOW = '2026-11-01T12:00:00Z';
const NEWEST = isoPlus(NOW, -10 * MINUTE);
const dir = tempDir();
const dbPath = dir.path('snapshot.db');
const servers: Record<string, TestApi> = {};
let key: string;

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber', name: 'Fiber' })],
    articles: [
      rawArticle({ slug: 'newest', title: 'Newest laser story', section_slug: 'fiber', published_at: NEWEST, updated_at: NEWEST }),
      rawArticle({ slug: 'older', title: 'Older laser story', section_slug: 'fiber', published_at: isoPlus(NOW, -60 * MINUTE) }),
    ],
    now: Date.parse(isoPlus(NOW, -120 * MINUTE)),
  });
  key = addKey(dbPath).key;
  servers['fast path'] = await startApi({ databasePath: dbPath, clock: testClock(NOW) });
  servers.express = await startApi({ databasePath: dbPath, clock: testClock(NOW), responseCacheBytes: 0 });
});

afterAll(async () => {
  for (const server of Object.values(servers)) await server.close();
  dir.cleanup();
});

const PATHS = ['/api/v1/articles', '/api/v1/articles/newest', '/api/v1/categories', '/api/v1/search?q=laser'];

/** One request written byte by byte, as curl would send it; returns the status line and headers. */
function rawGet(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; head: string; rest: string }> {
  const { hostname, port } = new URL(base);
  const lines = [`GET ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, 'User-Agent: curl/8.5.0', 'Accept: */*', 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const head = text.slice(0, split);
      resolve({ status: Number(head.split(' ')[1]), head, rest: text.slice(split + 4) });
    });
  });
}

describe.each(['fast path', 'express'])('conditional requests (%s)', (name) => {
  const server = () => servers[name]!;
  const fetchWith = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${server().url}${path}`, { headers: { 'X-API-Key': key, ...headers } });

  it('answers 304 to fetch revalidating with the ETag, although fetch sends Cache-Control: no-cache', async () => {
    for (const path of PATHS) {
      const first = await fetchWith(path);
      expect(first.status, path).toBe(200);
      const etag = first.headers.get('etag')!;
      await first.arrayBuffer();
      const second = await fetchWith(path, { 'If-None-Match': etag });
      expect(second.status, path).toBe(304);
      expect(second.headers.get('etag'), path).toBe(etag);
      expect(second.headers.get('cache-control'), path).toBe(CACHE_CONTROL);
      expect(await second.text(), path).toBe('');
    }
  });

  it('answers 304 to fetch with If-Modified-Since alone, and 200 when it is older than Last-Modified', async () => {
    const path = '/api/v1/articles';
    const lastModified = (await fetchWith(path)).headers.get('last-modified')!;
    expect(lastModified).toBe(new Date(NEWEST).toUTCString());
    expect((await fetchWith(path, { 'If-Modified-Since': lastModified })).status).toBe(304);
    const older = new Date(Date.parse(NEWEST) - 1000).toUTCString();
    expect((await fetchWith(path, { 'If-Modified-Since': older })).status).toBe(200);
  });

  it('answers 304 to raw requests with Cache-Control: no-cache or max-age=0 and a matching ETag', async () => {
    for (const path of PATHS) {
      const first = await rawGet(server().url, path, { 'X-API-Key': key });
      expect(first.status, path).toBe(200);
      const etag = /\r\netag: ([^\r]+)/i.exec(first.head)![1]!;
      for (const cacheControl of ['no-cache', 'max-age=0', 'no-store']) {
        const res = await rawGet(server().url, path, { 'X-API-Key': key, 'If-None-Match': etag, 'Cache-Control': cacheControl, Pragma: 'no-cache' });
        expect(res.status, `${path} ${cacheControl}`).toBe(304);
        expect(res.rest, path).toBe('');
      }
    }
  });

  it('compares If-None-Match weakly: W/ prefix, lists with spaces or not, and *', async () => {
    for (const path of PATHS) {
      // Asked without Accept-Encoding, as rawGet asks: the same representation, the same ETag.
      const etag = (await fetchWith(path, { 'Accept-Encoding': 'identity' })).headers.get('etag')!;
      for (const field of [`W/${etag}`, `"a", ${etag}`, `"a",W/${etag},"b"`, '*', ` ${etag} `]) {
        const res = await rawGet(server().url, path, { 'X-API-Key': key, 'If-None-Match': field });
        expect(res.status, `${path} If-None-Match: ${field}`).toBe(304);
      }
      for (const field of ['"other"', `W/"x${etag.slice(1)}`, etag.slice(0, -2) + '"']) {
        const res = await rawGet(server().url, path, { 'X-API-Key': key, 'If-None-Match': field });
        expect(res.status, `${path} If-None-Match: ${field}`).toBe(200);
      }
    }
  });

  it('ignores If-Modified-Since when If-None-Match is sent, either way', async () => {
    const path = '/api/v1/articles';
    const first = await fetchWith(path);
    const etag = first.headers.get('etag')!;
    const future = new Date(Date.parse(NOW) + 3_600_000).toUTCString();
    const ancient = new Date(0).toUTCString();
    expect((await fetchWith(path, { 'If-None-Match': '"stale"', 'If-Modified-Since': future })).status).toBe(200);
    expect((await fetchWith(path, { 'If-None-Match': etag, 'If-Modified-Since': ancient })).status).toBe(304);
  });

  it('never answers 304 to a request whose key is missing or whose parameters are wrong', async () => {
    const etag = (await fetchWith('/api/v1/articles')).headers.get('etag')!;
    const anonymous = await fetch(`${server().url}/api/v1/articles`, { headers: { 'If-None-Match': etag } });
    expect(anonymous.status).toBe(401);
    expect((await fetchWith('/api/v1/articles?limit=0', { 'If-None-Match': '*' })).status).toBe(400);
  });
});
