/*
 * The small partner client the typed-client test compiles and runs: written the way the
 * partners' guide recommends (docs/partners.md: types from openapi-typescript, calls with openapi-fetch). It is kept as
 * text because it imports the types the test generates at run time.
 */

export const CLIENT_SOURCE = `
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

type Article = components['schemas']['Article'];

const [baseUrl, apiKey] = process.argv.slice(2) as [string, string];
const client = createClient<paths>({ baseUrl, headers: { 'X-API-Key': apiKey } });

const list = await client.GET('/api/v1/articles', { params: { query: { locale: 'en', limit: 2 } } });
if (!list.data) throw new Error('list failed: ' + list.response.status);
const first: Article = list.data.data[0]!;
const pages: number = list.data.meta.pages;

const detail = await client.GET('/api/v1/articles/{slug}', { params: { path: { slug: first.slug } } });
if (!detail.data) throw new Error('detail failed: ' + detail.response.status);
const body: string = detail.data.data.body;
const etag = detail.response.headers.get('ETag') ?? '';

// Revalidate: a 304 (no body) says the copy we hold is current.
const again = await client.GET('/api/v1/articles/{slug}', {
  params: { path: { slug: first.slug }, header: { 'If-None-Match': etag } },
});

const search = await client.GET('/api/v1/search', { params: { query: { q: 'laser', limit: 5 } } });
if (!search.data) throw new Error('search failed: ' + search.response.status);

// Highlights are typed: the first hit's marked title words, read through their offsets.
const hit = search.data.data[0];
const title = hit?.highlights?.title;
const marked: string[] = title ? title.matches.map((m) => [...title.text].slice(m.start, m.start + m.length).join('')) : [];
const searched: string[] = search.data.meta.words;
const plain = await client.GET('/api/v1/search', { params: { query: { q: 'laser', highlight: 'false' } } });

const missing = await client.GET('/api/v1/articles/{slug}', { params: { path: { slug: 'no-such-story' } } });
const code: string | undefined = missing.error?.error.code;

console.log(JSON.stringify({
  list: { status: list.response.status, slugs: list.data.data.map((a) => a.slug), pages, link: list.response.headers.get('Link') },
  detail: { status: detail.response.status, slug: detail.data.data.slug, bodyLength: body.length, etag },
  again: { status: again.response.status, data: again.data ?? null },
  search: { status: search.response.status, q: search.data.meta.q, total: search.data.meta.total, words: searched, marked, bodyHtml: hit?.highlights?.body.html ?? null, plain: plain.data?.data.some((h) => h.highlights !== undefined) ?? null },
  missing: { status: missing.response.status, code },
}));
`;

/** Mistakes the generated types must refuse: each line alone must fail to compile. */
export const MISTAKES = [
  // A path that does not exist.
  `await client.GET('/api/v1/article', {});`,
  // limit is a number.
  `await client.GET('/api/v1/articles', { params: { query: { limit: 'five' } } });`,
  // locale is en or zh.
  `await client.GET('/api/v1/articles', { params: { query: { locale: 'fr' } } });`,
  // q is required on search.
  `await client.GET('/api/v1/search', { params: { query: { limit: 5 } } });`,
  // highlight is "true" or "false", not a boolean.
  `await client.GET('/api/v1/search', { params: { query: { q: 'laser', highlight: 'yes' } } });`,
  // A highlight match has no "end": it has start and length.
  `const r = await client.GET('/api/v1/search', { params: { query: { q: 'x1' } } }); console.log(r.data?.data[0]?.highlights?.title.matches[0]?.end);`,
  // The detail has no meta.
  `const r = await client.GET('/api/v1/articles/{slug}', { params: { path: { slug: 'x' } } }); console.log(r.data?.meta);`,
];

export const MISTAKE_PRELUDE = `
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';
const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:1' });
`;
