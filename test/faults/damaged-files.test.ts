import Database from 'better-sqlite3';
import { closeSync, copyFileSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { addKey, keysPathFor, startApi, type TestApi } from '../support/api.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { waitFor } from '../support/worker.js';

/*
 * Damaged and replaced-in-place database files, met by the real API process: a file written
 * over in place keeps its inode, so only its ctime says it changed; a damaged page found by any
 * request fails the whole store (content 503, /health 503 `unavailable` for the snapshot,
 * `degraded` for the keys) until the file changes again, and then the same process recovers.
 */

const dir = tempDir('damaged-files-');
const started: TestApi[] = [];
afterEach(async () => {
  for (const api of started.splice(0)) await api.close();
});
afterAll(() => dir.cleanup());

function snapshotWithKey(name: string): { path: string; keysPath: string; key: string } {
  const path = dir.path(`${name}/snapshot.db`);
  const now = Date.now();
  buildSnapshot(path, {
    sections: [rawSection({ slug: 'fiber' })],
    articles: [rawArticle({ slug: 'hello', section_slug: 'fiber', published_at: new Date(now - 60_000).toISOString() })],
    now: now - 60_000,
  });
  const { key } = addKey(path);
  return { path, keysPath: keysPathFor(path), key };
}

// The real app and HTTP server over real files, in this process: the machine is shared, and an
// API process per case costs seconds to start (test/ops covers the entry point itself).
async function start(path: string): Promise<TestApi> {
  const api = await startApi({ databasePath: path, busyTimeoutMs: 200 });
  started.push(api);
  return api;
}

async function get(api: TestApi, path: string, key?: string): Promise<{ status: number; body: Record<string, any>; text: string }> {
  const res = await fetch(api.url + path, { headers: key ? { 'X-API-Key': key } : {} });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Record<string, any>, text };
}

/** Writes `bytes` over the file in place: same inode, as `cp other live.db` does. */
function overwriteInPlace(path: string, bytes: Buffer, offset = 0): void {
  const before = statSync(path).ino;
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.length, offset);
  } finally {
    closeSync(fd);
  }
  expect(statSync(path).ino).toBe(before);
}

/** Garbage over the page that holds the articles table: only queries reading articles meet it. */
function damageArticlesPage(path: string): void {
  const db = new Database(path, { readonly: true });
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const root = db.prepare(`SELECT rootpage FROM sqlite_master WHERE name = 'articles'`).pluck().get() as number;
  db.close();
  overwriteInPlace(path, Buffer.alloc(pageSize, 0xa5), (root - 1) * pageSize);
}

describe('a damaged or overwritten snapshot', () => {
  it('after a restart on a damaged file: the first request that meets the damage fails the store, and /health answers 503 unavailable', async () => {
    const { path, key } = snapshotWithKey('damaged-restart');
    const good = readFileSync(path);
    damageArticlesPage(path);
    const api = await start(path);
    const content = await get(api, '/api/v1/articles', key);
    expect(content.status, content.text).toBe(503);
    expect(content.body.error.code).toBe('service_unavailable');
    const health = await get(api, '/health');
    expect(health.status, health.text).toBe(503);
    expect(health.body.status).toBe('unavailable');
    expect(health.body.error.message).toMatch(/damaged/);
    expect(health.text).not.toMatch(/SQLITE_|malformed/);
    expect(health.text).not.toContain(dir.dir);
    // Every content request now answers 503, not only those that read the damaged page.
    expect((await get(api, '/api/v1/categories', key)).status).toBe(503);

    // The good file written back in place: the same process serves again.
    overwriteInPlace(path, good);
    await waitFor(async () => (await get(api, '/health')).status === 200, { timeoutMs: 5_000, what: '/health ok again' });
    expect((await get(api, '/api/v1/articles', key)).status).toBe(200);
  });

  it('overwritten in place while the API runs: content and /health answer 503 at once, and it recovers', async () => {
    const { path, key } = snapshotWithKey('overwritten-running');
    const good = readFileSync(path);
    const api = await start(path);
    expect((await get(api, '/api/v1/articles', key)).status).toBe(200);
    expect((await get(api, '/health')).status).toBe(200);

    overwriteInPlace(path, Buffer.alloc(good.length, 'not a database '));
    const health = await get(api, '/health');
    expect(health.status, health.text).toBe(503);
    expect(health.body.status).toBe('unavailable');
    expect((await get(api, '/api/v1/articles', key)).status).toBe(503);

    overwriteInPlace(path, good);
    await waitFor(async () => (await get(api, '/health')).status === 200, { timeoutMs: 5_000, what: '/health ok again' });
    expect((await get(api, '/api/v1/articles', key)).status).toBe(200);
  });
});

describe('a keys database overwritten in place', () => {
  it('is never answered from memory: keyed requests answer 503, /health degraded with the reason, and it recovers', async () => {
    const { path, keysPath, key } = snapshotWithKey('keys-overwritten');
    const api = await start(path);
    expect((await get(api, '/api/v1/articles', key)).status).toBe(200);
    const good = readFileSync(keysPath);

    // `cp garbage keys.db`: the same inode, and nothing committed (data_version stays).
    overwriteInPlace(keysPath, Buffer.alloc(good.length, 'garbage '));
    const refused = await get(api, '/api/v1/articles', key);
    expect(refused.status, refused.text).toBe(503);
    expect(refused.body.error.code).toBe('service_unavailable');
    const health = await get(api, '/health');
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('degraded');
    expect(health.body.problems.join(' ')).toMatch(/keys database is unavailable: keys database file is damaged/);
    expect(health.text).not.toContain(dir.dir);

    overwriteInPlace(keysPath, good);
    await waitFor(async () => (await get(api, '/api/v1/articles', key)).status === 200, { timeoutMs: 5_000, what: 'keys read again' });
    expect((await get(api, '/health')).body.status).toBe('ok');
  });

  it('a valid keys database copied over the live one in place is read afresh: a key it revokes is refused', async () => {
    const { path, keysPath, key } = snapshotWithKey('keys-copied-over');
    const api = await start(path);
    expect((await get(api, '/api/v1/articles', key)).status).toBe(200);
    // Another keys database where this key is revoked, copied over the live file's bytes.
    const other = dir.path('keys-copied-over/other.db');
    copyFileSync(keysPath, other);
    const db = new Database(other);
    db.prepare(`UPDATE api_keys SET revoked_at = '2026-01-01T00:00:00Z'`).run();
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    overwriteInPlace(keysPath, readFileSync(other));
    const res = await get(api, '/api/v1/articles', key);
    expect(res.status, res.text).toBe(401);
    expect(res.body.error.code).toBe('revoked_api_key');
  });
});
