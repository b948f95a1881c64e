import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTICLE_FIELDS, DETAIL_FIELDS, SEARCH_FIELDS } from '../../src/http/endpoints/query-schemas.js';
import { renderBody } from '../../src/content/body-render.js';
import { openWriter } from '../../src/db/sqlite/connection.js';
import { recordFeedChanges } from '../../src/db/snapshot/feed-write.js';
import { addKey, startApi, testClock, type TestApi } from '../support/api.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { isoPlus, MINUTE } from '../support/contract-helpers.js';

/*
 * `fields` (issue 36, docs/specs/api-contract.md "Choosing fields and body formats"): on the list, search,
 * the single article and the change feed's upserts, items hold slug plus exactly the named
 * fields, in the usual order; the default answers are unchanged; each value is its own
 * representation; bad values are a 400 naming `fields`. Checked against the default answer as
 * the model, through Express and through the fast path.
 */

const NOW = '2026-11-01T12:00:00Z';
const dir = tempDir();
const dbPath = dir.path('snapshot.db');
let fast: TestApi;
let express: TestApi;
let key: string;

const BODY = '## Beam quality\n\nThe *M²* of the source is <b>1.1</b> & stable.';

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber', name: 'Fiber' })],
    articles: Array.from({ length: 5 }, (_, i) =>
      rawArticle({
        slug: `beam-${i}`,
        title: `Beam story ${i}`,
        section_slug: 'fiber',
        body_markdown: BODY,
        published_at: isoPlus(NOW, -(i + 1) * MINUTE),
        image: i === 0 ? { url: 'https://img.example.com/a.jpg', alt: 'A', credit: 'C', credit_url: 'https://c.example.com', source_url: 'https://s.example.com' } : null,
      }),
    ),
  });
  // The change feed as a sync records it: every exposed article as an upsert.
  const db = openWriter(dbPath, { busyTimeoutMs: 5_000 });
  try {
    db.$client.transaction(() => recordFeedChanges(db, 'en', 'all', Date.parse(NOW)))();
  } finally {
    db.$client.close();
  }
  key = addKey(dbPath).key;
  fast = await startApi({ databasePath: dbPath, clock: testClock(NOW), fastPath: true });
  express = await startApi({ databasePath: dbPath, clock: testClock(NOW), fastPath: false });
});

afterAll(async () => {
  await fast.close();
  await express.close();
  dir.cleanup();
});

const get = (api: TestApi, path: string) => fetch(`${api.url}${path}`, { headers: { 'X-API-Key': key } });

/** The model: slug, then the named fields in the order of `order`, from the full item. */
function project(item: Record<string, unknown>, names: readonly string[], order: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { slug: item.slug };
  for (const name of order) if (name !== 'slug' && names.includes(name) && name in item) out[name] = item[name];
  return out;
}

/** Reversed, so that the usual order must come from the API, not from the request. */
const given = (names: readonly string[]) => [...names].reverse().join(',');

const LIST_CASES: readonly (readonly string[])[] = [['title'], ['url', 'title'], ['slug'], ['image', 'section', 'published_at'], [...ARTICLE_FIELDS]];

describe('fields', () => {
  it('leaves every default answer unchanged', async () => {
    for (const path of ['/api/v1/articles', '/api/v1/articles/beam-0', '/api/v1/search?q=beam', '/api/v1/changes']) {
      const res = await get(express, path);
      expect(res.status, path).toBe(200);
      const body = (await res.json()) as { data: Record<string, unknown> | Record<string, unknown>[] };
      const item = (Array.isArray(body.data) ? body.data[0] : body.data) as Record<string, unknown>;
      expect(item, path).toBeDefined();
      const inner = (item.article ?? item) as Record<string, unknown>;
      expect(Object.keys(inner).slice(0, ARTICLE_FIELDS.length), path).toEqual([...ARTICLE_FIELDS]);
      expect(inner).not.toHaveProperty('body_html');
    }
  });

  it('gives slug plus exactly the named fields in the usual order on the list', async () => {
    const full = (await (await get(express, '/api/v1/articles?limit=5')).json()) as { data: Record<string, unknown>[]; meta: unknown };
    for (const names of LIST_CASES) {
      const res = await get(express, `/api/v1/articles?limit=5&fields=${given(names)}`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toBe(JSON.stringify({ data: full.data.map((a) => project(a, names, ARTICLE_FIELDS)), meta: full.meta }));
    }
  });

  it('applies to search hits, highlights included only when named', async () => {
    const full = (await (await get(express, '/api/v1/search?q=beam')).json()) as { data: Record<string, unknown>[]; meta: unknown };
    for (const names of [['title'], ['highlights', 'url'], [...SEARCH_FIELDS]]) {
      const text = await (await get(express, `/api/v1/search?q=beam&fields=${given(names)}`)).text();
      expect(text).toBe(JSON.stringify({ data: full.data.map((a) => project(a, names, SEARCH_FIELDS)), meta: full.meta }));
    }
    const none = (await (await get(express, '/api/v1/search?q=beam&highlight=false&fields=highlights')).json()) as { data: Record<string, unknown>[] };
    expect(Object.keys(none.data[0]!)).toEqual(['slug']);
  });

  it('applies to the single article, with body_html and body_text rendered from the Markdown body', async () => {
    const full = (await (await get(express, '/api/v1/articles/beam-0')).json()) as { data: Record<string, unknown> };
    const { html, text } = renderBody(BODY);
    const withRendered = { ...full.data, body_html: html, body_text: text };
    for (const names of [['body'], ['body_html'], ['body_text', 'title'], [...DETAIL_FIELDS]]) {
      const res = await get(express, `/api/v1/articles/beam-0?fields=${given(names)}`);
      expect(await res.text()).toBe(JSON.stringify({ data: project(withRendered, names, DETAIL_FIELDS) }));
    }
    expect(full.data.body).toBe(BODY);
  });

  it("applies to each upsert's article in the change feed, and leaves the change itself whole", async () => {
    const full = (await (await get(express, '/api/v1/changes')).json()) as { data: { article: Record<string, unknown> }[]; meta: unknown };
    const text = await (await get(express, '/api/v1/changes?fields=url,title')).text();
    expect(text).toBe(JSON.stringify({ data: full.data.map((c) => ({ ...c, article: project(c.article, ['title', 'url'], ARTICLE_FIELDS) })), meta: full.meta }));
  });

  it.each([
    ['/api/v1/articles?fields=title,,url', 'has an empty name'],
    ['/api/v1/articles?fields=', 'has an empty name'],
    ['/api/v1/articles?fields=title,nope', 'unknown field "nope"'],
    ['/api/v1/articles?fields=title,title', 'names title twice'],
    ['/api/v1/articles?fields=body', 'unknown field "body"'],
    ['/api/v1/articles?fields=body_html', 'unknown field "body_html"'],
    ['/api/v1/search?q=beam&fields=body', 'unknown field "body"'],
    ['/api/v1/changes?fields=highlights', 'unknown field "highlights"'],
    ['/api/v1/articles/beam-0?fields=highlights', 'unknown field "highlights"'],
    ['/api/v1/articles?fields=title&fields=url', 'given 2 times'],
  ])('answers 400 naming fields and the allowed names: %s', async (path, says) => {
    for (const api of [express, fast]) {
      const res = await get(api, path);
      expect(res.status, path).toBe(400);
      const body = (await res.json()) as { error: { code: string; param: string; message: string } };
      expect(body.error.code).toBe('invalid_parameter');
      expect(body.error.param).toBe('fields');
      expect(body.error.message).toContain(says);
      if (!says.startsWith('given')) expect(body.error.message).toContain(path.includes('/articles/beam') ? 'body_text' : 'published_at');
    }
  });

  it('gives each fields value its own ETag, and the same one for the same names in any order', async () => {
    const etag = async (path: string) => (await get(express, path)).headers.get('etag');
    const plain = await etag('/api/v1/articles');
    const title = await etag('/api/v1/articles?fields=title');
    const url = await etag('/api/v1/articles?fields=url');
    expect(new Set([plain, title, url]).size).toBe(3);
    expect(await etag('/api/v1/articles?fields=url,title')).toBe(await etag('/api/v1/articles?fields=title,url'));
    const detail = await etag('/api/v1/articles/beam-0?fields=body_html');
    expect(detail).not.toBe(await etag('/api/v1/articles/beam-0'));
  });

  it('keeps fields in the Link header', async () => {
    const res = await get(express, '/api/v1/articles?limit=2&fields=title');
    expect(res.headers.get('link')).toContain('</api/v1/articles?limit=2&fields=title&page=2>; rel="next"');
  });

  it('answers the same through the fast path as through Express, and a cache never mixes two values', async () => {
    const paths = [
      '/api/v1/articles?fields=title',
      '/api/v1/articles?fields=url',
      '/api/v1/articles',
      '/api/v1/articles?limit=2&fields=title,url&page=2',
      '/api/v1/articles/beam-0?fields=body_html,title',
      '/api/v1/articles/beam-0?fields=body',
      '/api/v1/articles/beam-0',
      '/api/v1/changes?fields=title',
      '/api/v1/changes',
      '/api/v1/search?q=beam&fields=title',
    ];
    for (let round = 0; round < 2; round++) {
      for (const path of paths) {
        const [a, b] = await Promise.all([get(fast, path), get(express, path)]);
        expect(a.status, path).toBe(b.status);
        expect(a.headers.get('etag'), path).toBe(b.headers.get('etag'));
        expect(a.headers.get('link'), path).toBe(b.headers.get('link'));
        expect(await a.text(), path).toBe(await b.text());
      }
    }
  });
});
