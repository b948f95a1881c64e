import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey, startApi, testClock, type TestApi } from '../support/api.js';
import { isoWithOffset, rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { isoPlus, MINUTE } from '../support/contract-helpers.js';

/*
 * published_after / published_before and order on the article list (issue 36, docs/specs/api-contract.md
 * "Date ranges and order"): bounds at exact instants with offsets, ties by slug in both
 * orders, exact totals, with section and updated_since, through Express and the fast path.
 */

const NOW = '2026-11-01T12:00:00Z';
const T = isoPlus(NOW, -60 * MINUTE);
const dir = tempDir();
const dbPath = dir.path('snapshot.db');
let fast: TestApi;
let express: TestApi;
let key: string;

// Three tied at T (slugs out of order on purpose), one a second before and after, a scheduled
// one (never listed before its time), and one in another section.
const ARTICLES = [
  rawArticle({ slug: 'tie-c', section_slug: 'fiber', published_at: T, updated_at: isoPlus(NOW, -5 * MINUTE) }),
  rawArticle({ slug: 'tie-a', section_slug: 'fiber', published_at: T, updated_at: isoPlus(NOW, -30 * MINUTE) }),
  rawArticle({ slug: 'after-1s', section_slug: 'fiber', published_at: isoPlus(T, 1000), updated_at: isoPlus(NOW, -50 * MINUTE) }),
  rawArticle({ slug: 'tie-b', section_slug: 'fiber', published_at: isoWithOffset(Date.parse(T), 8 * 60), updated_at: isoPlus(NOW, -5 * MINUTE) }),
  rawArticle({ slug: 'before-1s', section_slug: 'fiber', published_at: isoPlus(T, -1000), updated_at: isoPlus(NOW, -5 * MINUTE) }),
  rawArticle({ slug: 'other-section', section_slug: 'markets', published_at: isoPlus(T, -2000), updated_at: isoPlus(NOW, -5 * MINUTE) }),
  rawArticle({ slug: 'scheduled', section_slug: 'fiber', published_at: isoPlus(NOW, 10 * MINUTE), updated_at: isoPlus(NOW, -5 * MINUTE) }),
];
const NEWEST = ['after-1s', 'tie-a', 'tie-b', 'tie-c', 'before-1s', 'other-section'];
const OLDEST = ['other-section', 'before-1s', 'tie-a', 'tie-b', 'tie-c', 'after-1s'];

beforeAll(async () => {
  buildSnapshot(dbPath, { sections: [rawSection({ slug: 'fiber' }), rawSection({ slug: 'markets' })], articles: ARTICLES });
  key = addKey(dbPath).key;
  fast = await startApi({ databasePath: dbPath, clock: testClock(NOW), fastPath: true });
  express = await startApi({ databasePath: dbPath, clock: testClock(NOW), fastPath: false });
});

afterAll(async () => {
  await fast.close();
  await express.close();
  dir.cleanup();
});

type List = { data: { slug: string }[]; meta: { total: number; pages: number } };

/** Asks both APIs (twice, the second time from the fast path's cache) and requires one answer. */
async function list(query: string): Promise<List> {
  let text: string | undefined;
  for (const api of [express, fast, fast]) {
    const res = await fetch(`${api.url}/api/v1/articles?${query}`, { headers: { 'X-API-Key': key } });
    expect(res.status, query).toBe(200);
    const body = await res.text();
    if (text !== undefined) expect(body, query).toBe(text);
    text = body;
  }
  return JSON.parse(text!) as List;
}

const slugs = (r: List) => r.data.map((a) => a.slug);
const enc = encodeURIComponent;
const at8 = (iso: string) => enc(isoWithOffset(Date.parse(iso), 8 * 60));
const atMinus5 = (iso: string) => enc(isoWithOffset(Date.parse(iso), -5 * 60));

describe('the article list: published bounds and order', () => {
  it('orders newest first by default and oldest first on request, ties by slug in both', async () => {
    expect(slugs(await list(''))).toEqual(NEWEST);
    expect(slugs(await list('order=newest'))).toEqual(NEWEST);
    expect(slugs(await list('order=oldest'))).toEqual(OLDEST);
  });

  it('keeps published_after inclusive at the exact instant, written with any offset', async () => {
    for (const after of [enc(T), at8(T), atMinus5(T)]) {
      const r = await list(`published_after=${after}`);
      expect(slugs(r)).toEqual(['after-1s', 'tie-a', 'tie-b', 'tie-c']);
      expect(r.meta).toMatchObject({ total: 4, pages: 1 });
    }
  });

  it('keeps published_before exclusive at the exact instant', async () => {
    const r = await list(`published_before=${at8(T)}&order=oldest`);
    expect(slugs(r)).toEqual(['other-section', 'before-1s']);
    expect(r.meta.total).toBe(2);
  });

  it('takes both as a range, with exact totals and pages, in either order', async () => {
    const range = `published_after=${atMinus5(isoPlus(T, -1000))}&published_before=${at8(isoPlus(T, 1000))}`;
    const first = await list(`${range}&limit=2`);
    expect(slugs(first)).toEqual(['tie-a', 'tie-b']);
    expect(first.meta).toMatchObject({ total: 4, pages: 2 });
    expect(slugs(await list(`${range}&limit=2&page=2`))).toEqual(['tie-c', 'before-1s']);
    expect(slugs(await list(`${range}&limit=2&page=2&order=oldest`))).toEqual(['tie-b', 'tie-c']);
    expect(slugs(await list(`${range}&limit=2&page=3`))).toEqual([]);
  });

  it('combines with section and updated_since', async () => {
    expect(slugs(await list(`section=fiber&order=oldest&published_after=${enc(T)}`))).toEqual(['tie-a', 'tie-b', 'tie-c', 'after-1s']);
    const since = enc(isoPlus(NOW, -10 * MINUTE));
    const r = await list(`updated_since=${since}&order=oldest&published_before=${enc(isoPlus(T, 1000))}`);
    expect(slugs(r)).toEqual(['other-section', 'before-1s', 'tie-b', 'tie-c']);
    expect(r.meta.total).toBe(4);
  });

  it('never lists a scheduled article, whatever the bounds', async () => {
    const r = await list(`published_after=${enc(NOW)}`);
    expect(r.data).toEqual([]);
    expect(r.meta.total).toBe(0);
  });

  it.each([
    [`published_after=${enc(T)}&published_before=${enc(T)}`, 'published_after', 'earlier than published_before'],
    [`published_after=${enc(isoPlus(T, 1000))}&published_before=${enc(T)}`, 'published_after', 'earlier than published_before'],
    ['published_after=yesterday', 'published_after', 'ISO 8601'],
    ['published_before=2026-11-01T08:00:00', 'published_before', 'offset'],
    ['order=relevance', 'order', '"newest" or "oldest"'],
    ['order=NEWEST', 'order', '"newest" or "oldest"'],
  ])('answers 400 naming the parameter: %s', async (query, param, says) => {
    for (const api of [express, fast]) {
      const res = await fetch(`${api.url}/api/v1/articles?${query}`, { headers: { 'X-API-Key': key } });
      expect(res.status, query).toBe(400);
      const body = (await res.json()) as { error: { code: string; param: string; message: string } };
      expect(body.error).toMatchObject({ code: 'invalid_parameter', param });
      expect(body.error.message).toContain(says);
    }
  });

  it('keeps the bounds and the order in the Link header, as sent', async () => {
    const res = await fetch(`${express.url}/api/v1/articles?order=oldest&limit=2&published_after=${at8(isoPlus(T, -2000))}`, { headers: { 'X-API-Key': key } });
    expect(res.headers.get('link')).toContain(`</api/v1/articles?order=oldest&limit=2&published_after=${at8(isoPlus(T, -2000))}&page=2>; rel="next"`);
  });
});
