import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killApis, spawnApi, type ApiProcess } from '../support/api-process.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { cliJson } from '../support/keys-helpers.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { getJson, type Keyed } from './scope-support.js';

/*
 * "A scope change applies from the next request in every API process, like a revocation":
 * two real API processes over the same files, their caches warm with the key's answers, the
 * scope changed by the real CLI, then the very next request to each. And what a shared cache in
 * front is told: answers vary by key and are revalidated before every reuse.
 */

const dir = tempDir('scope-processes-');
const dbPath = dir.path('snapshot.db');
const keysPath = dir.path('keys.db');
let apis: ApiProcess[];
let id: number;
let key: string;

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'lasers' }), rawSection({ slug: 'optics' }), { ...rawSection({ slug: 'lasers' }), locale: 'zh' }],
    articles: [
      rawArticle({ slug: 'l1', section_slug: 'lasers', title: 'Photon one' }),
      rawArticle({ slug: 'o1', section_slug: 'optics', title: 'Photon two' }),
      rawArticle({ slug: 'o2', section_slug: 'optics', title: 'Photon three' }),
      rawArticle({ slug: 'z1', locale: 'zh', section_slug: 'lasers', title: '光子' }),
    ],
  });
  const created = await cliJson<{ id: number; key: string }>(['create', '--partner', 'Trade', '--sections', 'lasers', '--create'], keysPath, {
    DATABASE_PATH: dbPath,
  });
  ({ id, key } = created);
  apis = [];
  for (let i = 0; i < 2; i++) apis.push(await spawnApi({ DATABASE_PATH: dbPath, KEYS_DATABASE_PATH: keysPath, SEARCH_WORKERS: '1' }));
}, 120_000);

afterAll(async () => {
  await killApis();
  dir.cleanup();
});

const total = async (k: Keyed, path: string) => (await getJson<{ meta: { total: number } }>(k, path)).body.meta.total;

describe('a scope change across API processes', () => {
  it('reaches every process on its next request, past its warm caches', async () => {
    for (const api of apis) {
      const k = { url: api.url, key };
      for (let i = 0; i < 3; i++) {
        expect(await total(k, '/api/v1/articles?locale=en')).toBe(1);
        expect(await total(k, '/api/v1/search?locale=en&q=photon')).toBe(1);
        expect(await total(k, '/api/v1/categories?locale=en')).toBe(1);
      }
      const { headers } = await getJson(k, '/api/v1/articles?locale=en');
      expect(headers.get('vary')).toMatch(/X-API-Key/i);
      expect(headers.get('cache-control')).toMatch(/s-maxage=0/);
    }
    await cliJson(['scope', String(id), '--sections', 'optics,lasers', '--locales', 'zh'], keysPath, { DATABASE_PATH: dbPath });
    for (const api of apis) {
      const k = { url: api.url, key };
      const refused = await getJson<{ error: { code: string; message: string } }>(k, '/api/v1/articles?locale=en');
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('locale_not_allowed');
      expect(await total(k, '/api/v1/articles?locale=zh')).toBe(1);
    }
    await cliJson(['scope', String(id), '--all-locales'], keysPath, { DATABASE_PATH: dbPath });
    for (const api of apis) {
      const k = { url: api.url, key };
      expect(await total(k, '/api/v1/articles?locale=en')).toBe(3);
      expect(await total(k, '/api/v1/search?locale=en&q=photon')).toBe(3);
      expect(await total(k, '/api/v1/categories?locale=en')).toBe(2);
    }
  }, 60_000);
});
