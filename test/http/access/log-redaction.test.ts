import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { addKey, startApi, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';

const dir = tempDir();
const dbPath = dir.path('snapshot.db');
let api: TestApi;
let key: string;

beforeAll(async () => {
  buildSnapshot(dbPath, { sections: [rawSection({ slug: 'fiber' })], articles: [rawArticle({ slug: 'hello', section_slug: 'fiber' })] });
  key = addKey(dbPath).key;
  api = await startApi({ databasePath: dbPath });
});

afterAll(async () => {
  await api.close();
  dir.cleanup();
});

describe('the request log and credentials in the query string', () => {
  it('never logs the value of a credential-like parameter, on any route and any outcome', async () => {
    const secrets = ['ghp_SECRETVALUE1', 'AKIASECRETVALUE2', 'eyJhbGciSECRET3', 'hunter2SECRET4', 'deadbeefSECRET5'];
    const query = `api_key=${secrets[0]}&Access_Token=${secrets[1]}&%74%6f%6b%65%6e=${secrets[2]}&password=${secrets[3]}&X-Amz-Signature=${secrets[4]}`;
    const before = api.logs.length;
    const paths = ['/api/v1/articles', '/api/v1/articles/hello', '/api/v1/categories', '/api/v1/search', '/nope', '/health'];
    for (const path of paths) {
      await api.request.get(`${path}?${query}&q=laser`).set('X-API-Key', key);
      await api.request.get(`${path}?${query}`);
      await api.request.get(`${path}?key=${key}`);
    }
    await vi.waitFor(() => expect(api.logs.length).toBeGreaterThanOrEqual(before + paths.length * 3));
    const log = api.logs.slice(before).join('\n');
    for (const secret of [...secrets, key, key.slice(4)]) expect(log).not.toContain(secret);
    // The request is still traceable: the path and the other parameters stay.
    expect(log).toContain('/api/v1/search?api_key=[redacted]&Access_Token=[redacted]');
    expect(log).toContain('&q=laser');
  });
});
