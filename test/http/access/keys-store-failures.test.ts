import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../../src/keys/format.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { expectError, isoPlus, MINUTE } from '../../support/contract-helpers.js';

/*
 * The keys database fails the way the snapshot can: missing, replaced, garbage. Every case
 * is a 503 service_unavailable (a partner's key is never refused because of our failure),
 * the API stays up and recovers on the next request once the file is good again.
 */

const NOW = '2026-11-01T12:00:00Z';
const dir = tempDir('keys-store-failures-');
const clock = testClock(NOW);
const started: TestApi[] = [];

afterAll(async () => {
  for (const api of started) await api.close();
  dir.cleanup();
});

function snapshot(name: string): string {
  const path = dir.path(`${name}/snapshot.db`);
  buildSnapshot(path, {
    sections: [rawSection({ slug: 'fiber' })],
    articles: [rawArticle({ slug: 'hello', title: 'Laser hello', section_slug: 'fiber', published_at: isoPlus(NOW, -MINUTE) })],
    now: Date.parse(NOW) - 5 * MINUTE,
  });
  return path;
}

async function start(databasePath: string, keysDatabasePath: string): Promise<TestApi> {
  const api = await startApi({ databasePath, keysDatabasePath, clock, busyTimeoutMs: 200 });
  started.push(api);
  return api;
}

const PATHS = ['/api/v1/articles', '/api/v1/articles/hello', '/api/v1/categories', '/api/v1/search?q=laser'];

async function expectUnavailable(api: TestApi, keys: string[]): Promise<void> {
  for (const key of keys) {
    for (const path of PATHS) {
      const res = await api.request.get(path).set('X-API-Key', key);
      expectError(res, 503, 'service_unavailable');
      expect(res.headers['retry-after']).toBe('30');
      expect(res.text).not.toContain(dir.dir);
    }
  }
}

async function expectServed(api: TestApi, key: string): Promise<void> {
  for (const path of PATHS) expect((await api.request.get(path).set('X-API-Key', key)).status, path).toBe(200);
}

const remove = (path: string) => ['', '-wal', '-shm'].forEach((s) => rmSync(path + s, { force: true }));

describe('the keys database cannot answer', () => {
  it('missing at start: 503 for every key, never 401; recovers once it is created', async () => {
    const path = snapshot('missing');
    const keysPath = dir.path('missing/elsewhere/keys.db');
    const api = await start(path, keysPath);
    await expectUnavailable(api, [generateKey(), 'not-a-key-but-well-formed-enough-0000']);
    const key = addKey(path, 'Acme', {}).key;
    // addKey wrote beside the snapshot; the API reads KEYS_DATABASE_PATH: still 503.
    await expectUnavailable(api, [key]);
    mkdirSync(dirname(keysPath));
    copyFileSync(dir.path('missing/keys.db'), keysPath);
    await expectServed(api, key);
    expect(api.logs.join('\n')).toMatch(/keys database unavailable/);
    expect(api.logs.join('\n')).toMatch(/keys database available again/);
  });

  it('deleted while the API runs: 503, then 200 when it is back, with revocations as they were', async () => {
    const path = snapshot('deleted');
    const keysPath = dir.path('deleted/keys.db');
    const key = addKey(path).key;
    const backup = dir.path('deleted/keys.backup.db');
    copyFileSync(keysPath, backup);
    const api = await start(path, keysPath);
    await expectServed(api, key);
    remove(keysPath);
    await expectUnavailable(api, [key]);
    copyFileSync(backup, keysPath);
    await expectServed(api, key);
  });

  it('garbage instead of a database: 503, and 200 once a good file replaces it', async () => {
    const path = snapshot('garbage');
    const keysPath = dir.path('garbage/keys.db');
    const key = addKey(path).key;
    const good = dir.path('garbage/keys.good.db');
    copyFileSync(keysPath, good);
    remove(keysPath);
    writeFileSync(keysPath, 'not a database at all, only text that is long enough to fill a header'.repeat(100));
    const api = await start(path, keysPath);
    await expectUnavailable(api, [key]);
    rmSync(keysPath);
    copyFileSync(good, keysPath);
    await expectServed(api, key);
  });

  it('the snapshot given as the keys database: 503, not a 500 or a 401', async () => {
    const path = snapshot('snapshot-as-keys');
    const api = await start(path, path);
    await expectUnavailable(api, [generateKey()]);
    expect(api.logs.join('\n')).toMatch(/not a keys database/);
  });
});
