import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openWriter } from '../../../src/db/sqlite/connection.js';
import { migrations } from '../../../src/db/sqlite/migrate.js';
import { generateKey, hashKey, displayPrefix } from '../../../src/keys/format.js';
import { healthSchema } from '../../../src/http/contract/response-schemas.js';
import { addKey, keysPathFor, startApi, testClock, type TestApi } from '../../support/api.js';
import { REPO_ROOT } from '../../support/worker.js';
import { openKeys } from '../../../src/keys/open.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir, writeSnapshot, type SnapshotContent } from '../../support/snapshot-fixture.js';
import { deepStrict, expectError, expectNoLeak, isoPlus, MINUTE } from '../../support/contract-helpers.js';

const NOW = '2026-11-01T12:00:00Z';
const dir = tempDir();
const clock = testClock(NOW);
const started: TestApi[] = [];
const lockers: Database.Database[] = [];

afterAll(async () => {
  for (const locker of lockers) if (locker.open) locker.close();
  for (const api of started) await api.close();
  dir.cleanup();
});

const CONTENT: SnapshotContent = {
  sections: [rawSection({ slug: 'fiber', name: 'Fiber' })],
  articles: [rawArticle({ slug: 'hello', title: 'Laser hello', section_slug: 'fiber', published_at: isoPlus(NOW, -MINUTE) })],
  now: Date.parse(NOW) - 5 * MINUTE,
};

/**
 * A child process that takes the snapshot's lock exclusively (after a write), then lets go
 * `ms` later; resolves once it holds the lock. `released` resolves when it has let go and exited.
 */
async function holdLock(path: string, ms: number): Promise<{ released: Promise<void> }> {
  const script = `
    const db = new (require('better-sqlite3'))(process.argv[1]);
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN IMMEDIATE');
    db.prepare('UPDATE snapshot_state SET synced_at = synced_at').run();
    db.exec('COMMIT');
    process.stdout.write('locked\\n');
    setTimeout(() => { db.close(); process.stdout.write('released\\n'); }, ${ms});`;
  const child = spawn(process.execPath, ['-e', script, path], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let said = '';
  const closed = once(child, 'close');
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes('locked')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the lock holder exited (${code}) before locking: ${said}`)));
  });
  return {
    released: closed.then(() => {
      expect(said).toContain('released');
    }),
  };
}

const CONTENT_PATHS = ['/api/v1/articles', '/api/v1/articles/hello', '/api/v1/categories', '/api/v1/search?q=laser'];

async function start(databasePath: string): Promise<TestApi> {
  const api = await startApi({ databasePath, clock, busyTimeoutMs: 200 });
  started.push(api);
  return api;
}

/** Every content route and /health answer 503 service_unavailable, revealing nothing. */
async function expectUnavailable(api: TestApi, key: string): Promise<void> {
  for (const path of CONTENT_PATHS) {
    const res = await api.request.get(path).set('X-API-Key', key);
    expectError(res, 503, 'service_unavailable');
    expect(res.text).not.toContain(dir.dir);
  }
  const health = await api.request.get('/health');
  expect(health.status).toBe(503);
  expect(health.headers['cache-control']).toBe('no-store');
  const body = deepStrict(healthSchema).parse(health.body);
  expect(body.status).toBe('unavailable');
  expect(body.snapshot).toBeUndefined();
  expect(body.error?.code).toBe('service_unavailable');
  expect(body.error?.message).toMatch(/^The snapshot is unavailable: .+\.$/);
  expect(body.search).toEqual({ engine: 'sqlite', status: 'ok' });
  // The engine's name (`sqlite`) is part of the health contract; the error is what must not
  // leak. Its message is for operators and may say the file is "not a valid SQLite database"
  // (the format expected), but no SQLite error code, SQL, stack or path.
  expect(body.error?.message).not.toMatch(/SQLITE_/);
  expectNoLeak(JSON.stringify(body.error).replace('valid SQLite database', 'valid database'));
  expect(health.text).not.toContain(dir.dir);
}

/** Every content route and /health answer 200 again: the same process recovered. */
async function expectAvailable(api: TestApi, key: string): Promise<void> {
  for (const path of CONTENT_PATHS) {
    const res = await api.request.get(path).set('X-API-Key', key);
    expect(res.status, `${path}: ${res.text}`).toBe(200);
  }
  const health = await api.request.get('/health');
  expect(health.status).toBe(200);
  expect(health.body.status).toBe('ok');
}

/** A complete snapshot with one key, its WAL checkpointed away: safe to copy or rename. */
function goodSnapshot(path: string): string {
  buildSnapshot(path, CONTENT);
  return addKey(path).key;
}

function removeDatabase(path: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
}

describe('a missing database', () => {
  it('gives 503 at start, on content routes and /health, and recovers when the file appears', async () => {
    const path = dir.path('missing-at-start.db');
    const staged = dir.path('missing-at-start.staged.db');
    const key = goodSnapshot(staged);
    const api = await start(path);

    await expectUnavailable(api, key);
    // The keys database answers, so the key is checked first, as the contract says: a valid
    // key gets our 503, a request without one its 401 whatever else is wrong.
    expectError(await api.request.get('/api/v1/articles').set('X-API-Key', generateKey()), 401, 'invalid_api_key');
    expectError(await api.request.get('/api/v1/articles'), 401, 'missing_api_key');

    renameSync(staged, path);
    await expectAvailable(api, key);
  });

  it('gives 503 when the file is deleted while the API runs, and recovers when it is back', async () => {
    const path = dir.path('deleted.db');
    const backup = dir.path('deleted.backup.db');
    const key = goodSnapshot(path);
    copyFileSync(path, backup);
    const api = await start(path);
    await expectAvailable(api, key);

    removeDatabase(path);
    await expectUnavailable(api, key);

    copyFileSync(backup, path);
    await expectAvailable(api, key);
  });

  it('gives 503 when the file is not a SQLite database, and recovers when a good one replaces it', async () => {
    const path = dir.path('garbage.db');
    const staged = dir.path('garbage.staged.db');
    const key = goodSnapshot(staged);
    writeFileSync(path, 'this is not a database, just some text that is long enough to look like a header'.repeat(100));
    const api = await start(path);
    await expectUnavailable(api, key);

    rmSync(path);
    renameSync(staged, path);
    await expectAvailable(api, key);
  });
});

describe('another database at DATABASE_PATH', () => {
  it('gives 503 and /health names it as no snapshot (the keys database?), not as one to migrate', async () => {
    const snapshot = dir.path('real/snapshot.db');
    mkdirSync(dirname(snapshot), { recursive: true });
    const key = goodSnapshot(snapshot);
    // The operator swapped the two paths: the API's DATABASE_PATH names the keys database.
    const api = await start(keysPathFor(snapshot));
    expectError(await api.request.get('/api/v1/articles').set('X-API-Key', key), 503, 'service_unavailable');
    const health = await api.request.get('/health');
    expect(health.status).toBe(503);
    expect(health.body.error.message).toMatch(/is not a snapshot this version knows \(the keys database\?\)/);
    expect(health.body.error.message).not.toMatch(/migrate/);
    expect(health.text).not.toContain(dir.dir);
  });
});

describe('a database whose schema is newer than the code', () => {
  it('is served as before (a rolling upgrade whose worker went first, or a rollback)', async () => {
    const path = dir.path('newer.db');
    const key = goodSnapshot(path);
    const newer = new Database(path);
    newer.exec('CREATE TABLE future_thing (x)');
    newer.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run('f'.repeat(64), Date.now() + 1e9);
    newer.close();
    const api = await start(path);
    await expectAvailable(api, key);
    expect((await api.request.get('/health')).status).toBe(200);
  });
});

describe('a database whose schema is older than the code', () => {
  it('gives 503 with only the first migration applied, then 503 until synced, then 200', async () => {
    const path = dir.path('first-migration.db');
    const [first] = migrations();
    // A key the editors created before the upgrade: it must get a 503, not a 401.
    const key = generateKey();
    const sqlite = new Database(path);
    try {
      for (const statement of first!.sql) if (statement.trim()) sqlite.exec(statement);
      sqlite.exec('CREATE TABLE __drizzle_migrations (id INTEGER PRIMARY KEY, hash TEXT NOT NULL, created_at NUMERIC)');
      sqlite.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run(first!.hash, first!.folderMillis);
      sqlite
        .prepare('INSERT INTO api_keys (partner, prefix, hash, created_at) VALUES (?, ?, ?, ?)')
        .run('Early Partner', displayPrefix(key), hashKey(key), NOW);
    } finally {
      sqlite.close();
    }
    // An upgrade in progress: the keys database does not exist yet either.
    const keysPath = dir.path('first-migration-keys.db');
    const api = await startApi({ databasePath: path, keysDatabasePath: keysPath, clock, busyTimeoutMs: 200 });
    started.push(api);
    await expectUnavailable(api, key);
    const health = await api.request.get('/health');
    expect(health.body.error.message).toContain('schema is older');

    // The worker migrates on start: the schema is current but nothing is synced yet.
    openWriter(path, { busyTimeoutMs: 5_000 }).$client.close();
    await expectUnavailable(api, key);

    const db = openWriter(path, { busyTimeoutMs: 5_000 });
    try {
      writeSnapshot(db, CONTENT);
    } finally {
      db.$client.close();
    }
    // Synced, but the key is still only in the snapshot's old table, which the API no longer
    // reads, and the keys database does not exist yet: still a 503, never a 401, until
    // `keys init` creates it and moves the key there. (/health reports the snapshot: 200.)
    for (const route of CONTENT_PATHS) {
      expectError(await api.request.get(route).set('X-API-Key', key), 503, 'service_unavailable');
    }
    openKeys(keysPath, path, { busyTimeoutMs: 5_000, create: true, importAlways: true }).db.$client.close();
    await expectAvailable(api, key);
  });

  it('gives 503 when the migrations table is empty, and recovers when it is restored', async () => {
    const path = dir.path('no-migrations.db');
    const key = goodSnapshot(path);
    const sqlite = new Database(path);
    let rows: { id: number; hash: string; created_at: number }[];
    try {
      rows = sqlite.prepare('SELECT id, hash, created_at FROM __drizzle_migrations').all() as typeof rows;
      expect(rows.length).toBe(migrations().length);
      sqlite.exec('DELETE FROM __drizzle_migrations');
    } finally {
      sqlite.close();
    }
    const api = await start(path);
    await expectUnavailable(api, key);
    // Tables but no migration recorded: nothing says it is a snapshot, and the worker will not
    // touch it either (so the advice is not "run a sync").
    expect((await api.request.get('/health')).body.error.message).toContain('is not a snapshot this version knows');

    const restore = new Database(path);
    try {
      const insert = restore.prepare('INSERT INTO __drizzle_migrations (id, hash, created_at) VALUES (?, ?, ?)');
      for (const row of rows) insert.run(row.id, row.hash, row.created_at);
    } finally {
      restore.close();
    }
    await expectAvailable(api, key);
  });
});

describe('a database that was never synced', () => {
  it('gives 503 on content routes and /health, and 200 after the first sync', async () => {
    const path = dir.path('never-synced.db');
    // openWriter alone creates the schema (as the CLI does when an editor adds the first key).
    openWriter(path, { busyTimeoutMs: 5_000 }).$client.close();
    const key = addKey(path).key;
    const api = await start(path);

    await expectUnavailable(api, key);
    expect((await api.request.get('/health')).body.error.message).toContain('no sync has completed yet');

    const db = openWriter(path, { busyTimeoutMs: 5_000 });
    try {
      writeSnapshot(db, CONTENT);
    } finally {
      db.$client.close();
    }
    await expectAvailable(api, key);
  });
});

describe('a locked database', () => {
  it('gives 503 once the busy timeout passes, on content routes and /health, and 200 once released', async () => {
    const path = dir.path('locked.db');
    const key = goodSnapshot(path);

    // Another process holding an exclusive lock after a write (locking_mode=EXCLUSIVE keeps it).
    const locker = new Database(path);
    lockers.push(locker);
    locker.pragma('locking_mode = EXCLUSIVE');
    locker.exec('BEGIN IMMEDIATE');
    locker.prepare('UPDATE snapshot_state SET synced_at = synced_at').run();
    locker.exec('COMMIT');

    const api = await start(path);
    expectError(await api.request.get('/api/v1/articles').set('X-API-Key', key), 503, 'service_unavailable');
    await expectUnavailable(api, key);
    expect((await api.request.get('/health')).body.error.message).toContain('locked');

    locker.close();
    await expectAvailable(api, key);
  });

  it('waits for a lock up to DATABASE_BUSY_TIMEOUT_MS: refused past it, answered within it', async () => {
    const path = dir.path('held.db');
    const key = goodSnapshot(path);
    // Another process holds the lock for two seconds; the wait blocks this whole process
    // (SQLite waits synchronously), so only another process can let go meanwhile.
    const short = await start(path); // 200 ms: far shorter than the hold
    let holder = await holdLock(path, 2_000);
    expectError(await short.request.get('/api/v1/articles').set('X-API-Key', key), 503, 'service_unavailable');
    await holder.released;

    const patient = await startApi({ databasePath: path, clock, busyTimeoutMs: 10 * 60_000 }); // longer than the test
    started.push(patient);
    holder = await holdLock(path, 2_000);
    const waited = await patient.request.get('/api/v1/articles').set('X-API-Key', key);
    expect(waited.status, waited.text).toBe(200);
    await holder.released;
  });
});
