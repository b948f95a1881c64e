import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addKey, keysPathFor } from '../support/api.js';
import { killApis, spawnApi, type ApiProcess } from '../support/api-process.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { cliJson, expectOneLineFailure } from '../support/keys-helpers.js';
import { runCli, lines } from '../support/run-node.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';

/*
 * Usage per key and UTC day, end to end: a real API process answers a known sequence of
 * requests, stops on SIGTERM (which writes the counts), and `keys usage` prints exactly them.
 */

const dir = tempDir();
const dbPath = dir.path('snapshot.db');
const keysPath = keysPathFor(dbPath);
const today = new Date().toISOString().slice(0, 10);

beforeAll(() => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber' }), { ...rawSection({ slug: 'fiber' }), locale: 'zh' }],
    articles: [
      rawArticle({ slug: 'hello', section_slug: 'fiber', published_at: '2026-01-01T00:00:00Z' }),
      rawArticle({ slug: 'world', section_slug: 'fiber', published_at: '2026-01-02T00:00:00Z' }),
      rawArticle({ slug: 'hello', locale: 'zh', section_slug: 'fiber', published_at: '2026-01-01T00:00:00Z' }),
    ],
  });
});
afterEach(() => killApis());
afterAll(() => dir.cleanup());

async function get(api: ApiProcess, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${api.url}${path}`, { headers });
  await res.arrayBuffer();
  return res;
}

async function stop(api: ApiProcess) {
  api.child.kill('SIGTERM');
  expect((await api.exited).code).toBe(0);
}

interface Row {
  key_id: number;
  partner: string;
  day: string;
  articles: number;
  article: number;
  categories: number;
  search: number;
  changes: number;
  not_modified: number;
  client_errors: number;
  server_errors: number;
  distinct_articles: number;
}

describe('usage per key and day', () => {
  let a: { id: number; key: string };
  let b: { id: number; key: string };
  beforeAll(async () => {
    a = addKey(dbPath, 'Acme Media');
    b = addKey(dbPath, 'Beta, "News"');
    const api = await spawnApi({ DATABASE_PATH: dbPath });
    const A = { 'X-API-Key': a.key };
    // Twice each, so the fast path answers the second (the cached path counts the same).
    for (let i = 0; i < 2; i++) {
      expect((await get(api, '/api/v1/articles', A)).status).toBe(200);
      expect((await get(api, '/api/v1/articles/hello', A)).status).toBe(200);
    }
    const list = await get(api, '/api/v1/articles', A);
    expect((await get(api, '/api/v1/articles', { ...A, 'If-None-Match': list.headers.get('etag')! })).status).toBe(304);
    expect((await get(api, '/api/v1/articles/world', A)).status).toBe(200);
    // The same slug in another locale is another article.
    expect((await get(api, '/api/v1/articles/hello?locale=zh', A)).status).toBe(200);
    expect((await get(api, '/api/v1/articles/nope', A)).status).toBe(404);
    expect((await get(api, '/api/v1/categories', A)).status).toBe(200);
    expect((await get(api, '/api/v1/changes', A)).status).toBe(200);
    expect((await get(api, '/api/v1/search?q=article', A)).status).toBe(200);
    expect((await get(api, '/api/v1/articles?limit=0', A)).status).toBe(400);
    // A keyed request to no endpoint: a 4xx of the key, no endpoint's.
    expect((await get(api, '/api/v1/nothing', A)).status).toBe(404);
    expect((await get(api, '/api/v1/categories', { 'X-API-Key': b.key })).status).toBe(200);
    // Without a valid key there is no key to count against.
    expect((await get(api, '/api/v1/articles')).status).toBe(401);
    expect((await get(api, '/api/v1/articles', { 'X-API-Key': 'lsk_nottherightkey000000000000000' })).status).toBe(401);
    await stop(api);
  });

  it('counts each request once, by endpoint and outcome, with distinct articles per locale', async () => {
    const rows = await cliJson<Row[]>(['usage'], keysPath);
    expect(rows).toEqual([
      {
        key_id: a.id,
        partner: 'Acme Media',
        day: today,
        articles: 5,
        article: 5,
        categories: 1,
        search: 1,
        changes: 1,
        not_modified: 1,
        client_errors: 3,
        server_errors: 0,
        distinct_articles: 3,
      },
      {
        key_id: b.id,
        partner: 'Beta, "News"',
        day: today,
        articles: 0,
        article: 0,
        categories: 1,
        search: 0,
        changes: 0,
        not_modified: 0,
        client_errors: 0,
        server_errors: 0,
        distinct_articles: 0,
      },
    ]);
  });

  it('filters by partner, key and days', async () => {
    expect((await cliJson<Row[]>(['usage', '--partner', 'Acme Media'], keysPath)).map((r) => r.key_id)).toEqual([a.id]);
    expect((await cliJson<Row[]>(['usage', '--id', String(b.id)], keysPath)).map((r) => r.key_id)).toEqual([b.id]);
    expect(await cliJson<Row[]>(['usage', '--from', today, '--to', today], keysPath)).toHaveLength(2);
    expect(await cliJson<Row[]>(['usage', '--to', '2000-01-01'], keysPath)).toEqual([]);
    expect(await cliJson<Row[]>(['usage', '--from', '2999-01-01'], keysPath)).toEqual([]);
  });

  it('prints a table by default and CSV with --csv', async () => {
    const table = await runCli(['usage'], keysPath);
    expect(table.code).toBe(0);
    const [head, first] = lines(table.stdout);
    expect(head).toMatch(/^DAY\s+KEY\s+PARTNER\s+ARTICLES\s+ARTICLE\s+CATEGORIES\s+SEARCH\s+CHANGES\s+304\s+4XX\s+5XX\s+DISTINCT ARTICLES$/);
    expect(first!.split(/\s{2,}/)).toEqual([today, String(a.id), 'Acme Media', '5', '5', '1', '1', '1', '1', '3', '0', '3']);
    const csv = await runCli(['usage', '--csv'], keysPath);
    expect(lines(csv.stdout)).toEqual([
      'day,key_id,partner,articles,article,categories,search,changes,not_modified,client_errors,server_errors,distinct_articles',
      `${today},${a.id},Acme Media,5,5,1,1,1,1,3,0,3`,
      `${today},${b.id},"Beta, ""News""",0,0,1,0,0,0,0,0,0`,
    ]);
  });

  it('refuses bad filters with one line', async () => {
    expect(expectOneLineFailure(await runCli(['usage', '--from', '2026-02-30'], keysPath))).toMatch(/--from must be a UTC day as YYYY-MM-DD/);
    expect(expectOneLineFailure(await runCli(['usage', '--from', '2026-03-02', '--to', '2026-03-01'], keysPath))).toMatch(/after --to/);
    expect(expectOneLineFailure(await runCli(['usage', '--partner', 'Nobody'], keysPath))).toMatch(/no key belongs to a partner named "Nobody"/);
    expect(expectOneLineFailure(await runCli(['usage', '--id', '999'], keysPath))).toMatch(/no key with id 999/);
    expect(expectOneLineFailure(await runCli(['usage', '--id', '1', '--partner', 'Acme Media'], keysPath))).toMatch(/not both/);
    expect(expectOneLineFailure(await runCli(['usage', '--json', '--csv'], keysPath))).toMatch(/not both/);
  });

  it('stores counts only: no address, no user agent', () => {
    const db = new Database(keysPath, { readonly: true });
    try {
      const columns = (table: string) => (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
      expect(columns('key_usage')).toEqual([
        'key_id', 'day', 'articles', 'article', 'categories', 'search', 'changes',
        'not_modified', 'client_errors', 'server_errors', 'distinct_articles',
      ]);
      expect(columns('key_usage_articles')).toEqual(['day', 'key_id', 'locale', 'slug']);
    } finally {
      db.close();
    }
  });
});
