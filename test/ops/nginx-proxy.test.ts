import { CACHE_CONTROL } from '../../src/http/cache/representation.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basePathOf, stripBasePath } from '../../src/http/pipeline/base-path.js';
import { revokeKey } from '../../src/keys/manage.js';
import { addKey, startApi, testClock, withKeys, type TestApi } from '../support/api.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { freePort, nginxMissing, startNginx, type Nginx } from '../support/tools/nginx.js';
import { skipWithoutTool } from '../support/tools/required-tool.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';

/*
 * The API behind a real nginx (Debian's) used as reverse proxy and shared cache, under a path
 * prefix (PUBLIC_BASE_URL=/syndication), as operators run it:
 * - `keep`: proxies /syndication/... as is, with the shared cache as an operator who did not
 *   read our advice would set it (proxy_cache on everything, nothing else);
 * - `strip`: proxies /syndication/... to /..., with the shared cache as the deployment guide
 *   sets it (the partner's validators passed on to the API).
 */

const NOW = '2026-11-01T12:00:00Z';
const dir = tempDir('nginx-proxy-');
const dbPath = dir.path('snapshot.db');
// Skipped with the reason printed where nginx is missing; a failure on CI (required-tool.ts).
const missing = skipWithoutTool('nginx', nginxMissing());

let api: TestApi;
let nginx: Nginx;
const base: Record<'keep' | 'strip', string> = { keep: '', strip: '' };

const cacheDirectives = `
    proxy_cache api;
    proxy_cache_revalidate on;
    add_header X-Cache-Status $upstream_cache_status always;`;

beforeAll(async () => {
  if (missing) return;
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber', name: 'Fiber' })],
    articles: Array.from({ length: 5 }, (_, i) =>
      rawArticle({ slug: `story-${i}`, title: `Laser story ${i}`, section_slug: 'fiber', published_at: `2026-10-2${i}T08:00:00Z` }),
    ),
  });
  api = await startApi({ databasePath: dbPath, clock: testClock(NOW), publicBaseUrl: '/syndication' });
  const upstream = new URL(api.url).host;
  const [keep, strip] = [await freePort(), await freePort()];
  nginx = await startNginx(
    dir.path('.'),
    `
  proxy_cache_path ${dir.path('cache')} keys_zone=api:1m;
  server {
    listen 127.0.0.1:${keep};
    location /syndication/ {
      proxy_pass http://${upstream};${cacheDirectives}
    }
  }
  server {
    listen 127.0.0.1:${strip};
    location /syndication/ {
      proxy_pass http://${upstream}/;${cacheDirectives}
      # nginx's cache replaces the partner's validators with its own: without these two lines
      # a partner revalidating through it gets the whole answer again instead of a 304.
      proxy_set_header If-None-Match $http_if_none_match;
      proxy_set_header If-Modified-Since $http_if_modified_since;
    }
  }`,
    [keep, strip],
  );
  base.keep = `http://127.0.0.1:${keep}/syndication`;
  base.strip = `http://127.0.0.1:${strip}/syndication`;
}, 600_000);

afterAll(async () => {
  await nginx?.stop();
  await api?.close();
  dir.cleanup();
});

const get = (url: string, key?: string, headers: Record<string, string> = {}) =>
  fetch(url, { headers: { ...(key ? { 'X-API-Key': key } : {}), ...headers }, redirect: 'manual' });

describe.skipIf(missing)('behind nginx as a shared cache', () => {
  for (const proxy of ['keep', 'strip'] as const) {
    it(`${proxy}: refuses a revoked key on its very next request through the cache`, async () => {
      const { id, key } = addKey(dbPath, `Revoked via ${proxy}`);
      for (let i = 0; i < 3; i++) {
        const res = await get(`${base[proxy]}/api/v1/articles`, key);
        expect(res.status).toBe(200);
        expect(res.headers.get('cache-control')).toBe(CACHE_CONTROL);
        // nginx honours s-maxage=0 by not storing the answer: each request reaches the API.
        expect(res.headers.get('x-cache-status')).not.toBe('HIT');
        await res.arrayBuffer();
      }
      withKeys(dbPath, (db) => revokeKey(db, id, Date.now));
      const res = await get(`${base[proxy]}/api/v1/articles`, key);
      expect(res.status).toBe(401);
      expect(((await res.json()) as any).error.code).toBe('revoked_api_key');
    });

    it(`${proxy}: never gives one key's answer to another key or to no key`, async () => {
      const a = addKey(dbPath, `A via ${proxy}`);
      const b = addKey(dbPath, `B via ${proxy}`);
      const url = `${base[proxy]}/api/v1/articles/story-1`;
      expect((await get(url, a.key)).status).toBe(200);
      const other = await get(url, b.key);
      expect(other.status).toBe(200);
      expect(other.headers.get('x-cache-status')).not.toBe('HIT');
      for (const [key, code] of [
        [undefined, 'missing_api_key'],
        ['lsk_' + 'x'.repeat(32), 'invalid_api_key'],
      ] as const) {
        const res = await get(url, key);
        expect(res.status).toBe(401);
        expect(((await res.json()) as any).error.code).toBe(code);
      }
    });
  }

  it('strip (the guide\'s settings): revalidates with the API on every request and answers 304 to a current copy', async () => {
    const { key } = addKey(dbPath, 'Revalidating partner');
    const url = `${base.strip}/api/v1/articles?limit=2`;
    const first = await get(url, key);
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    const lastModified = first.headers.get('last-modified')!;
    await first.arrayBuffer();
    const before = api.logs.length;
    const byEtag = await get(url, key, { 'If-None-Match': etag });
    expect(byEtag.status).toBe(304);
    const byDate = await get(url, key, { 'If-Modified-Since': lastModified });
    expect(byDate.status).toBe(304);
    // Both went to the API (a 304 of its own, logged), not answered from nginx's store.
    const answered = api.logs.slice(before).map((l) => JSON.parse(l) as { res?: { status: number } });
    expect(answered.filter((l) => l.res?.status === 304)).toHaveLength(2);
  });

  for (const proxy of ['keep', 'strip'] as const) {
    it(`${proxy}: /docs, its assets, the OpenAPI document, its servers, Link targets and the change feed all resolve under /syndication`, async () => {
      const { key } = addKey(dbPath, `Prefix via ${proxy}`);
      const page = `${base[proxy]}/docs`;
      const html = await (await get(page)).text();
      expect(html).toContain('Getting started');
      const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => new URL(m[1]!, page));
      expect(refs.length).toBeGreaterThanOrEqual(6);
      for (const ref of refs) {
        expect(ref.pathname, `${ref}`).toMatch(/^\/syndication\//);
        expect((await get(ref.href)).status, `${ref}`).toBe(200);
      }
      // The trailing-slash form is sent back to the page, relatively.
      const slash = await get(`${page}/`);
      expect(slash.status).toBe(301);
      expect(new URL(slash.headers.get('location')!, `${page}/`).href).toBe(page);

      const doc = (await (await get(`${base[proxy]}/api/v1/openapi.json`)).json()) as any;
      expect(doc.servers[0].url).toBe('/syndication');
      const origin = new URL(page).origin;
      for (const path of Object.keys(doc.paths)) {
        const query = path.endsWith('/search') ? '?q=laser' : '';
        const target = new URL(doc.servers[0].url + path.replace('{slug}', 'story-1') + query, origin);
        expect((await get(target.href, key)).status, target.pathname).toBe(200);
      }

      const list = `${base[proxy]}/api/v1/articles?limit=2`;
      const link = (await get(list, key)).headers.get('link')!;
      const next = /<([^>]+)>; rel="next"/.exec(link)![1]!;
      expect(next).toMatch(/^\/syndication\/api\/v1\/articles\?/);
      const second = await get(new URL(next, list).href, key);
      expect(second.status).toBe(200);
      expect(((await second.json()) as any).meta.page).toBe(2);

      // The change feed's links are cursors, passed back as `since` on the same URL.
      const feed = `${base[proxy]}/api/v1/changes?limit=2`;
      const firstPage = await get(feed, key);
      expect(firstPage.status).toBe(200);
      const cursor = ((await firstPage.json()) as any).meta.next as string;
      expect(cursor).toMatch(/^c_/);
      const rest = await get(`${feed}&since=${encodeURIComponent(cursor)}`, key);
      expect(rest.status).toBe(200);
      expect(((await rest.json()) as any).meta.since).toBe(cursor);
    });
  }
});

describe('PUBLIC_BASE_URL path prefix routing (no proxy needed)', () => {
  it('routes a request under the prefix without it, and leaves the API\'s own paths alone even when the prefix looks like one', () => {
    expect(basePathOf('/')).toBe('');
    expect(basePathOf('https://example.com/syndication/')).toBe('/syndication');
    expect(stripBasePath('/syndication/api/v1/articles?page=2', '/syndication')).toBe('/api/v1/articles?page=2');
    expect(stripBasePath('/syndication', '/syndication')).toBe('/');
    expect(stripBasePath('/syndication?x=1', '/syndication')).toBe('/?x=1');
    expect(stripBasePath('/syndicationx/docs', '/syndication')).toBe('/syndicationx/docs');
    expect(stripBasePath('/api/v1/articles', '/syndication')).toBe('/api/v1/articles');
    // PUBLIC_BASE_URL=/api behind a proxy that strips it: /api/v1/... is the API's own path.
    expect(stripBasePath('/api/v1/articles', '/api')).toBe('/api/v1/articles');
    expect(stripBasePath('/api/api/v1/articles', '/api')).toBe('/api/v1/articles');
  });
});
