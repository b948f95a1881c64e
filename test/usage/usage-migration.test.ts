import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KEYS_MIGRATIONS } from '../../src/db/keys/keys-connection.js';
import { utcDay, writeUsage } from '../../src/db/keys/usage-counts.js';
import { migrations } from '../../src/db/sqlite/migrate.js';
import { displayPrefix, generateKey, hashKey } from '../../src/keys/format.js';
import { appendRevocation, revocationLogPath } from '../../src/keys/revocation-log.js';
import { killApis, spawnApi } from '../support/api-process.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { cliJson, readRows, type SummaryJson } from '../support/keys-helpers.js';
import { runCli } from '../support/run-node.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';

/*
 * The keys database of the release before usage (migration 0000 only) migrates forward
 * without losing a key, a revocation or the revocation log; backup and restore carry usage.
 */

const dir = tempDir();
afterEach(() => killApis());
afterAll(() => dir.cleanup());

/** A keys database exactly as the previous release left it: 0000 applied, two keys, one revoked. */
function keysDatabaseAtRelease0000(path: string): { active: string; revoked: string } {
  const [initial] = migrations(KEYS_MIGRATIONS);
  const db = new Database(path);
  try {
    db.pragma('journal_mode = WAL');
    for (const statement of initial!.sql) if (statement.trim()) db.exec(statement);
    db.exec('CREATE TABLE __drizzle_migrations (id INTEGER PRIMARY KEY, hash TEXT NOT NULL, created_at NUMERIC)');
    db.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run(initial!.hash, initial!.folderMillis);
    const active = generateKey();
    const revoked = generateKey();
    const insert = db.prepare('INSERT INTO api_keys (partner, prefix, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?)');
    insert.run('Old Partner', displayPrefix(active), hashKey(active), '2026-01-01T00:00:00Z', null);
    insert.run('Gone Partner', displayPrefix(revoked), hashKey(revoked), '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z');
    return { active, revoked };
  } finally {
    db.close();
  }
}

describe('the keys database of the previous release', () => {
  const snapshot = dir.path('snapshot.db');
  const keysPath = dir.path('keys.db');
  let keys: { active: string; revoked: string };
  beforeAll(() => {
    buildSnapshot(snapshot, { sections: [rawSection({ slug: 'fiber' })], articles: [rawArticle({ slug: 'hello', section_slug: 'fiber' })] });
    keys = keysDatabaseAtRelease0000(keysPath);
    appendRevocation(keysPath, { id: 2, prefix: displayPrefix(keys.revoked), hash: hashKey(keys.revoked), revoked_at: '2026-02-01T00:00:00Z' });
  });

  it('is refused by the new API until a keys command migrates it, then keeps every key, revocation and the log', async () => {
    const log = readFileSync(revocationLogPath(keysPath), 'utf8');
    const before = await spawnApi({ DATABASE_PATH: snapshot, KEYS_DATABASE_PATH: keysPath });
    expect((await fetch(`${before.url}/api/v1/articles`, { headers: { 'X-API-Key': keys.active } })).status).toBe(503);
    before.child.kill('SIGTERM');
    await before.exited;

    const listed = await cliJson<SummaryJson[]>(['list'], keysPath, { DATABASE_PATH: snapshot });
    expect(listed.map((k) => [k.partner, k.status, k.revoked_at])).toEqual([
      ['Old Partner', 'active', null],
      ['Gone Partner', 'revoked', '2026-02-01T00:00:00Z'],
    ]);
    expect(readFileSync(revocationLogPath(keysPath), 'utf8')).toBe(log);
    expect(readRows(keysPath, 'SELECT count(*) AS n FROM __drizzle_migrations')).toEqual([{ n: migrations(KEYS_MIGRATIONS).length }]);

    const api = await spawnApi({ DATABASE_PATH: snapshot, KEYS_DATABASE_PATH: keysPath });
    expect((await fetch(`${api.url}/api/v1/articles`, { headers: { 'X-API-Key': keys.active } })).status).toBe(200);
    expect((await fetch(`${api.url}/api/v1/articles`, { headers: { 'X-API-Key': keys.revoked } })).status).toBe(401);
    api.child.kill('SIGTERM');
    expect((await api.exited).code).toBe(0);
    const usage = await cliJson<{ key_id: number; articles: number; client_errors: number }[]>(['usage'], keysPath, { DATABASE_PATH: snapshot });
    // A refused key (revoked, expired, unknown) is not a key the request used: not counted.
    expect(usage.map((u) => [u.key_id, u.articles, u.client_errors])).toEqual([[1, 1, 0]]);
  });
});

describe('keys backup and restore', () => {
  const keysPath = dir.path('restore-keys.db');
  const env = { DATABASE_PATH: dir.path('no-snapshot.db') };
  const day = utcDay(Date.now());
  const counts = (n: number) => [n, n, 0, 0, 0, 0, 0, 0];

  function addUsage(keyId: number, n: number, slug: string) {
    const db = new Database(keysPath);
    try {
      writeUsage(db, { counts: [{ keyId, day, counts: counts(n) }], articles: [{ keyId, day, locale: 'en', slug }] });
    } finally {
      db.close();
    }
  }
  const stored = () => readRows<{ articles: number; slugs: number }>(keysPath, `SELECT articles, (SELECT count(*) FROM key_usage_articles) AS slugs FROM key_usage`);

  it('a backup holds the usage; a restore keeps the usage counted since the backup', async () => {
    const created = await cliJson<{ id: number }>(['create', '--partner', 'Acme', '--create'], keysPath, env);
    addUsage(created.id, 3, 'a');
    const backup = dir.path('usage-backup.db');
    expect((await runCli(['backup', backup], keysPath, env)).code).toBe(0);
    expect(readRows(backup, 'SELECT articles FROM key_usage')).toEqual([{ articles: 3 }]);
    addUsage(created.id, 2, 'b');
    expect(stored()).toEqual([{ articles: 5, slugs: 2 }]);

    const restored = await cliJson<{ usage_days_carried: number }>(['restore', backup], keysPath, env);
    expect(restored.usage_days_carried).toBe(1);
    expect(stored()).toEqual([{ articles: 5, slugs: 2 }]);
  });
});
