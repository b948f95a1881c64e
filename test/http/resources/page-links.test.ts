import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reachablePages } from '../../../src/content/search.js';
import { linkHeader } from '../../../src/http/cache/page-links.js';
import { ROUTES } from '../../../src/http/endpoints/routes-table.js';
import type { SearchEngine } from '../../../src/search/engine.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { isoPlus, MINUTE } from '../../support/contract-helpers.js';

/*
 * The Link header of the article list and of search: a client pages by following
 * rel="next" without building URLs, and gets the same header from Express and from the
 * cached fast path.
 */

const NOW = '2026-11-01T12:00:00Z';
const dir = tempDir();
const dbPath = dir.path('snapshot.db');
let cached: TestApi;
let uncached: TestApi;
let key: string;

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber', name: 'Fiber' }), rawSection({ slug: 'markets', name: 'Markets' })],
    articles: Array.from({ length: 7 }, (_, i) =>
      rawArticle({ slug: `laser-${i}`, title: `Laser story ${i}`, section_slug: i < 5 ? 'fiber' : 'markets', published_at: isoPlus(NOW, -(i + 1) * MINUTE) }),
    ),
  });
  key = addKey(dbPath).key;
  cached = await startApi({ databasePath: dbPath, clock: testClock(NOW) });
  uncached = await startApi({ databasePath: dbPath, clock: testClock(NOW), responseCacheBytes: 0 });
});

afterAll(async () => {
  await cached.close();
  await uncached.close();
  dir.cleanup();
});

/** rel -> target, parsed as RFC 8288 link-values. */
function links(header: string | null): Record<string, string> {
  if (!header) return {};
  return Object.fromEntries(
    header.split(/,\s*(?=<)/).map((part) => {
      const m = /^<([^>]*)>;\s*rel="([^"]+)"$/.exec(part.trim());
      expect(m, part).not.toBeNull();
      return [m![2]!, m![1]!];
    }),
  );
}

const get = (api: TestApi, path: string) => fetch(`${api.url}${path}`, { headers: { 'X-API-Key': key } });

describe('Link header', () => {
  it('links next, prev, first and last, keeping the parameters the list reads and dropping unknown ones', async () => {
    const res = await get(uncached, `/api/v1/articles?section=fiber&limit=2&page=2&locale=en&utm=${'x'.repeat(6000)}`);
    const l = links(res.headers.get('link'));
    expect(l).toEqual({
      next: '/api/v1/articles?section=fiber&limit=2&locale=en&page=3',
      prev: '/api/v1/articles?section=fiber&limit=2&locale=en&page=1',
      first: '/api/v1/articles?section=fiber&limit=2&locale=en&page=1',
      last: '/api/v1/articles?section=fiber&limit=2&locale=en&page=3',
    });
    const body = (await res.json()) as { meta: { page: number; pages: number } };
    expect(body.meta).toMatchObject({ page: 2, pages: 3 });
  });

  it('adds page when the request had none, and has no next on the last page nor prev on the first', async () => {
    const first = links((await get(uncached, '/api/v1/articles?limit=5')).headers.get('link'));
    expect(first).toEqual({ next: '/api/v1/articles?limit=5&page=2', first: '/api/v1/articles?limit=5&page=1', last: '/api/v1/articles?limit=5&page=2' });
    const last = links((await get(uncached, '/api/v1/articles?limit=5&page=2')).headers.get('link'));
    expect(Object.keys(last).sort()).toEqual(['first', 'last', 'prev']);
  });

  it('points prev at the last page from past the end, and sends no Link when nothing matches', async () => {
    const past = links((await get(uncached, '/api/v1/articles?limit=5&page=9')).headers.get('link'));
    expect(past.prev).toBe('/api/v1/articles?limit=5&page=2');
    expect(past.next).toBeUndefined();
    const none = await get(uncached, '/api/v1/articles?section=nothing-here');
    expect(none.status).toBe(200);
    expect(none.headers.get('link')).toBeNull();
  });

  it('lets a client walk every page by following rel="next" from the response URL', async () => {
    const slugs: string[] = [];
    let url: string | undefined = `${cached.url}/api/v1/articles?limit=3`;
    for (let hops = 0; url && hops < 10; hops++) {
      const res: Response = await fetch(url, { headers: { 'X-API-Key': key } });
      slugs.push(...((await res.json()) as { data: { slug: string }[] }).data.map((a) => a.slug));
      const next = links(res.headers.get('link')).next;
      url = next ? new URL(next, res.url).toString() : undefined;
    }
    expect(slugs).toEqual(Array.from({ length: 7 }, (_, i) => `laser-${i}`));
  });

  it('is on search results too, with q kept encoded', async () => {
    const res = await get(uncached, '/api/v1/search?q=laser%20story&limit=3');
    const l = links(res.headers.get('link'));
    expect(l.next).toBe('/api/v1/search?q=laser+story&limit=3&page=2');
    expect(new URL(l.next!, res.url).searchParams.get('q')).toBe('laser story');
  });

  it('keeps q on search with a trailing slash in the path, which Express routes to search too', async () => {
    const res = await get(uncached, '/api/v1/search/?q=laser&limit=3');
    expect(res.status).toBe(200);
    const l = links(res.headers.get('link'));
    expect(new URL(l.next!, res.url).searchParams.get('q')).toBe('laser');
    expect((await fetch(new URL(l.next!, res.url), { headers: { 'X-API-Key': key } })).status).toBe(200);
  });

  it('stops next and last of search at the last page within the 10,000-hit depth', () => {
    // 30,000 hits, 50 a page: 600 pages, of which the first 200 start within 10,000 hits.
    expect(reachablePages(600, 50)).toBe(200);
    expect(reachablePages(3, 50)).toBe(3);
    expect(reachablePages(10_000, 3)).toBe(3_334);
  });

  it('has no next on the last search page within the depth, and its last is that page', async () => {
    // An engine that reports 30,000 matches (no fixture holds that many): only the paging is under test.
    const deep: SearchEngine = {
      name: 'sqlite',
      followsSnapshot: false,
      search: async () => ({ ids: [], total: 30_000 }),
      health: async () => ({ engine: 'sqlite', status: 'ok' }),
      close: async () => {},
    };
    const api = await startApi({ databasePath: dbPath, clock: testClock(NOW), engine: deep });
    try {
      const res = await get(api, '/api/v1/search?q=laser&limit=50&page=200');
      expect(res.status).toBe(200);
      expect(links(res.headers.get('link'))).toEqual({
        prev: '/api/v1/search?q=laser&limit=50&page=199',
        first: '/api/v1/search?q=laser&limit=50&page=1',
        last: '/api/v1/search?q=laser&limit=50&page=200',
      });
    } finally {
      await api.close();
    }
  });

  it('is identical from the fast path and from Express, and on a 304', async () => {
    for (const path of ['/api/v1/articles?limit=2&page=2', '/api/v1/articles?limit=3&section=fiber', '/api/v1/search?q=laser&limit=2']) {
      const fromExpress = await get(uncached, path);
      await get(cached, path); // fills the cache
      const fromFastPath = await get(cached, path);
      expect(fromExpress.headers.get('link'), path).toEqual(expect.any(String));
      expect(fromFastPath.headers.get('link'), path).toBe(fromExpress.headers.get('link'));
      const notModified = await fetch(`${cached.url}${path}`, { headers: { 'X-API-Key': key, 'If-None-Match': fromExpress.headers.get('etag')! } });
      expect(notModified.status).toBe(304);
      expect(notModified.headers.get('link'), path).toBe(fromExpress.headers.get('link'));
    }
  });

  it('is absent from the single article and the sections', async () => {
    for (const path of ['/api/v1/articles/laser-1', '/api/v1/categories']) {
      expect((await get(cached, path)).headers.get('link'), path).toBeNull();
    }
  });

  it('never echoes the host of an absolute-form request line', () => {
    const header = linkHeader('http://evil.example/api/v1/articles?limit=5', { page: 1, pages: 3 }, ROUTES.articles.linkParams);
    expect(links(header!)).toEqual({
      next: '/api/v1/articles?limit=5&page=2',
      first: '/api/v1/articles?limit=5&page=1',
      last: '/api/v1/articles?limit=5&page=3',
    });
  });

  it('builds the header for edge pages without the server', () => {
    expect(linkHeader('/api/v1/articles', { page: 1, pages: 1 }, ROUTES.articles.linkParams)).toBe('</api/v1/articles?page=1>; rel="first", </api/v1/articles?page=1>; rel="last"');
    expect(linkHeader('/api/v1/articles?page=1', { page: 1, pages: 0 }, ROUTES.articles.linkParams)).toBeUndefined();
  });
});
