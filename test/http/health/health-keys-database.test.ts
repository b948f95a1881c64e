import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { healthSchema, type Health } from '../../../src/http/contract/response-schemas.js';
import { addKey, keysPathFor, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { deepStrict, expectError, expectNoLeak, isoPlus, MINUTE } from '../../support/contract-helpers.js';

/*
 * /health and the keys database: when the keys cannot be checked every /api/v1 request is a
 * 503, so /health must say so, or no alert fires. It stays 200 (`degraded`): the contract
 * answers 503 only when the snapshot cannot be read, and the keys database is shared by every
 * host, so taking hosts out of rotation would not help.
 */

const NOW = '2026-11-01T12:00:00Z';
const dir = tempDir('health-keys-');
const clock = testClock(NOW);
const started: TestApi[] = [];

afterAll(async () => {
  for (const api of started) await api.close();
  dir.cleanup();
});

/** A fresh, synced snapshot in its own folder, with a good keys database beside it. */
function snapshotWithKey(name: string): { path: string; key: string } {
  const path = dir.path(`${name}/snapshot.db`);
  buildSnapshot(path, {
    sections: [rawSection({ slug: 'fiber' })],
    articles: [rawArticle({ slug: 'hello', section_slug: 'fiber', published_at: isoPlus(NOW, -MINUTE) })],
    now: Date.parse(NOW) - 5 * MINUTE,
  });
  return { path, key: addKey(path).key };
}

async function start(databasePath: string, keysDatabasePath: string): Promise<TestApi> {
  const api = await startApi({ databasePath, keysDatabasePath, clock, busyTimeoutMs: 200 });
  started.push(api);
  return api;
}

/** /health is 200 `degraded` with the keys database's problem, revealing no path or SQL. */
async function expectKeysUnavailable(api: TestApi, reason: RegExp): Promise<Health> {
  const res = await api.request.get('/health');
  expect(res.status, res.text).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  const body = deepStrict(healthSchema).parse(res.body);
  expect(body.status).toBe('degraded');
  expect(body.snapshot).toBeDefined();
  expect(body.problems).toHaveLength(1);
  const problem = body.problems![0]!;
  expect(problem).toMatch(/^The keys database is unavailable: .+; every \/api\/v1 request answers 503 until it is back\.$/);
  expect(problem).toMatch(reason);
  expect(body.search).toEqual({ engine: 'sqlite', status: 'ok' });
  expect(problem).not.toMatch(/SQLITE_/);
  expectNoLeak(problem.replace('valid SQLite database', 'valid database'));
  expect(res.text).not.toContain(dir.dir);
  return body;
}

async function expectHealthy(api: TestApi): Promise<void> {
  const res = await api.request.get('/health');
  expect(res.status, res.text).toBe(200);
  expect(res.body.status).toBe('ok');
}

describe('GET /health and the keys database', () => {
  it('answers 200 ok while the keys database can be read', async () => {
    const { path } = snapshotWithKey('good');
    await expectHealthy(await start(path, keysPathFor(path)));
  });

  it('answers 200 degraded when the keys database file is missing, while every /api/v1 request answers 503', async () => {
    const { path, key } = snapshotWithKey('missing');
    const api = await start(path, dir.path('missing/elsewhere/keys.db'));
    await expectKeysUnavailable(api, /not found or not readable/);
    expectError(await api.request.get('/api/v1/articles').set('X-API-Key', key), 503, 'service_unavailable');
  });

  it('answers 200 degraded when the keys database file is not a database at all', async () => {
    const { path } = snapshotWithKey('garbage');
    const keysPath = dir.path('garbage/garbage-keys.db');
    writeFileSync(keysPath, Buffer.alloc(8192, 'not a database '));
    await expectKeysUnavailable(await start(path, keysPath), /not a valid SQLite database/);
  });

  it('answers 200 degraded when KEYS_DATABASE_PATH points at the snapshot instead of a keys database', async () => {
    const { path } = snapshotWithKey('wrong-file');
    await expectKeysUnavailable(await start(path, path), /not a keys database/);
  });

  it('answers ok again from the same process once the keys database is there', async () => {
    const { path } = snapshotWithKey('recovers');
    const keysPath = dir.path('recovers/later/keys.db');
    const api = await start(path, keysPath);
    await expectKeysUnavailable(api, /not found/);
    mkdirSync(dir.path('recovers/later'));
    copyFileSync(keysPathFor(path), keysPath);
    await expectHealthy(api);
  });
});
