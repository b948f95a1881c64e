import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../src/db/sqlite/migrate.js';
import { displayPrefix, generateKey, hashKey } from '../../src/keys/format.js';
import { runCli } from '../support/run-node.js';
import { killApis, spawnApi } from '../support/api-process.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../fakes/test-cms.js';
import { killWorkers, query, runWorker, workerEnv } from '../support/worker.js';

/*
 * Issue 23 item 4: the upgrade from the previous release, on that release's data (a snapshot
 * without the change feed's migration, partner keys in its api_keys table), in the documented
 * order: keys init, the new worker once, the new API, keys init again. Every request the new
 * API answers is served (no 503 window), and a key revoked with the old CLI during the switch
 * is refused once init has run again. Real CLI, worker and API processes.
 */

const dir = tempDir('upgrade-');
let cms: TestCms;
const ACTIVE = generateKey();
const LATER_REVOKED = generateKey();

/** A snapshot as the previous release left it: its two migrations, content, and keys inside. */
function previousReleaseSnapshot(path: string): void {
  buildSnapshot(path, {
    sections: [rawSection({ id: 'sec-news', slug: 'news' }), { ...rawSection({ id: 'sec-news-zh', slug: 'news' }), locale: 'zh' }],
    articles: [rawArticle({ id: 'art-old', slug: 'old-story', section_slug: 'news', published_at: '2026-01-01T00:00:00Z' })],
  });
  const feed = migrations().find((m) => m.sql.some((statement) => statement.includes('CREATE TABLE `feed_entries`')))!;
  // The release after it also widened the ordering index (0003): undone as well.
  const exposureIndex = migrations().find((m) => m.sql.some((statement) => statement.includes('CREATE INDEX `articles_exposure`')))!;
  // And the one after that added the champion lists (0004): undone too.
  const lists = migrations().find((m) => m.sql.some((statement) => statement.includes('CREATE TABLE `search_common_lists`')))!;
  const sqlite = new Database(path);
  sqlite.exec('DROP TABLE feed_entries; DROP TABLE feed_state');
  for (const trigger of ['articles_insert', 'articles_update', 'articles_delete', 'sections_rename']) sqlite.exec(`DROP TRIGGER ${trigger}_stales_common_lists`);
  sqlite.exec('DROP TABLE search_common_lists; DROP TABLE search_common_lists_state');
  sqlite.exec('DROP INDEX articles_exposure; CREATE INDEX `articles_locale_published` ON `articles` (`locale`,"published_at" DESC,`slug`)');
  for (const migration of [feed, exposureIndex, lists]) sqlite.prepare('DELETE FROM __drizzle_migrations WHERE hash = ?').run(migration.hash);
  const insert = sqlite.prepare('INSERT INTO api_keys (partner, prefix, hash, created_at) VALUES (?, ?, ?, ?)');
  insert.run('Acme Media', displayPrefix(ACTIVE), hashKey(ACTIVE), '2026-01-01T00:00:00Z');
  insert.run('Globex News', displayPrefix(LATER_REVOKED), hashKey(LATER_REVOKED), '2026-01-01T00:00:00Z');
  sqlite.close();
}

beforeAll(async () => {
  cms = await startTestCms();
  cms.store.upsertSection('en', rawSection({ id: 'sec-news', slug: 'news' }));
  cms.store.upsertSection('zh', rawSection({ id: 'sec-news-zh', slug: 'news' }));
  cms.store.upsertArticle(rawArticle({ id: 'art-old', slug: 'old-story', section_slug: 'news', published_at: '2026-01-01T00:00:00Z' }));
});

afterAll(async () => {
  await killApis();
  await killWorkers();
  await cms?.close();
  dir.cleanup();
});

const get = (url: string, key: string) => fetch(`${url}/api/v1/articles?locale=en`, { headers: { 'X-API-Key': key } });

describe('upgrading from the previous release', () => {
  it('in the documented order: init, worker, API, init again: no 503 on the new API, and a revocation made with the old CLI meanwhile applies', async () => {
    const snapshot = dir.path('ordered/snapshot.db');
    const keys = dir.path('ordered/keys.db');
    previousReleaseSnapshot(snapshot);
    const env = { DATABASE_PATH: snapshot, KEYS_DATABASE_PATH: keys };

    // 1. keys init (the old API still serves, reading its keys from the snapshot).
    const init = await runCli(['init'], keys, { DATABASE_PATH: snapshot }, { timeoutMs: 60_000 });
    expect(init.code, init.stderr).toBe(0);
    // 2. The new worker, once: it migrates the snapshot (the old API reads a newer schema as before).
    const worker = await runWorker(['--once'], workerEnv({ ...env, CMS_BASE_URL: cms.url, LOG_LEVEL: 'warn' }), 90_000);
    expect(worker.code, worker.stderr).toBe(0);
    expect(query(snapshot, `SELECT count(*) AS n FROM feed_entries`)).toEqual([{ n: 1 }]);
    // Meanwhile an editor revokes a key with the old CLI: in the snapshot's old table.
    const old = new Database(snapshot);
    old.prepare(`UPDATE api_keys SET revoked_at = '2026-11-26T12:00:00Z' WHERE hash = ?`).run(hashKey(LATER_REVOKED));
    old.close();

    // 3. The new API: its very first answers are served.
    const api = await spawnApi(env);
    const first = await get(api.url, ACTIVE);
    expect(first.status).toBe(200);
    expect(((await first.json()) as { data: Array<{ slug: string }> }).data.map((a) => a.slug)).toEqual(['old-story']);
    expect((await fetch(`${api.url}/api/v1/changes?locale=en`, { headers: { 'X-API-Key': ACTIVE } })).status).toBe(200);

    // 4. keys init again: the revocation made with the old CLI applies on the next request.
    const again = await runCli(['init', '--json'], keys, { DATABASE_PATH: snapshot }, { timeoutMs: 60_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ imported: 0, already_present: 2, revocations_applied: 1 });
    expect((await get(api.url, LATER_REVOKED)).status).toBe(401);
    expect((await get(api.url, ACTIVE)).status).toBe(200);
  }, 240_000);

  it('with the new API first, it answers 503 until the new worker has migrated the snapshot (why the order matters)', async () => {
    const snapshot = dir.path('api-first/snapshot.db');
    const keys = dir.path('api-first/keys.db');
    previousReleaseSnapshot(snapshot);
    const env = { DATABASE_PATH: snapshot, KEYS_DATABASE_PATH: keys };
    expect((await runCli(['init'], keys, { DATABASE_PATH: snapshot }, { timeoutMs: 60_000 })).code).toBe(0);

    const api = await spawnApi(env);
    const early = await get(api.url, ACTIVE);
    expect(early.status).toBe(503);
    expect(((await early.json()) as { error: { code: string } }).error.code).toBe('service_unavailable');

    const worker = await runWorker(['--once'], workerEnv({ ...env, CMS_BASE_URL: cms.url, LOG_LEVEL: 'warn' }), 90_000);
    expect(worker.code, worker.stderr).toBe(0);
    expect((await get(api.url, ACTIVE)).status).toBe(200);
  }, 240_000);
});
