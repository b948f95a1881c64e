import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey } from '../../support/api.js';
import { killApis, spawnApi, type ApiProcess } from '../../support/api-process.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import { killWorkers, query, runWorker, workerEnv } from '../../support/worker.js';

/*
 * Issue 23 item 5: the change feed cannot be bypassed. Something writes the snapshot without
 * writing the feed (an older worker after a rollback, a restored backup, a manual fix): the
 * next full sync finds what partners were not told and tells them, so a mirror that follows
 * the feed converges again and a takedown answers article_removed. Real files, the real
 * worker (dist/sync/main.js) and the real API (dist/src/server.js) as child processes.
 */

interface Change {
  type: 'upsert' | 'delete';
  slug: string;
  article?: { title: string };
}

const dir = tempDir('feed-reconcile-');
const databasePath = dir.path('snapshot.db');
let cms: TestCms;
let api: ApiProcess;
let key: string;

const env = () => workerEnv({ DATABASE_PATH: databasePath, CMS_BASE_URL: cms.url, LOG_LEVEL: 'warn' });

async function sync(...args: string[]): Promise<void> {
  const result = await runWorker(['--once', ...args], env(), 60_000);
  expect(result.code, result.stderr).toBe(0);
}

async function get(path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${api.url}${path}`, { headers: { 'X-API-Key': key } });
  return { status: res.status, body: await res.json() };
}

/** Every change of the en feed after `since` (from the beginning when undefined), and the cursor after them. */
async function readFeed(since: string | undefined): Promise<{ changes: Change[]; next: string }> {
  const changes: Change[] = [];
  let cursor = since;
  for (;;) {
    const { status, body } = await get(`/api/v1/changes?locale=en&limit=100${cursor ? `&since=${encodeURIComponent(cursor)}` : ''}`);
    expect(status, JSON.stringify(body)).toBe(200);
    changes.push(...(body.data as Change[]));
    cursor = body.meta.next as string;
    if (!body.meta.has_more) return { changes, next: cursor };
  }
}

beforeAll(async () => {
  cms = await startTestCms();
  cms.store.upsertSection('en', rawSection({ slug: 'news' }));
  cms.store.upsertSection('zh', rawSection({ slug: 'news' }));
  for (const slug of ['kept', 'edited', 'taken-down']) cms.store.upsertArticle(rawArticle({ id: slug, slug, section_slug: 'news' }));
  await sync('--full');
  key = addKey(databasePath, 'Mirror Partner').key;
  api = await spawnApi({ DATABASE_PATH: databasePath });
}, 120_000);

afterAll(async () => {
  await killApis();
  await killWorkers();
  await cms?.close();
  dir.cleanup();
});

describe('a change written to the snapshot without the feed', () => {
  it('reaches the feed on the next full sync: an upsert for the edit, a delete for the takedown, article_removed on the detail', async () => {
    // The partner's mirror is up to date.
    const start = await readFeed(undefined);
    expect(start.changes.map((c) => c.slug).sort()).toEqual(['edited', 'kept', 'taken-down']);

    // What an older worker does after a rollback: it syncs an edit and a takedown from the CMS
    // into the articles, and writes nothing to the feed. Here the real worker syncs, and the
    // feed is then put back exactly as it was before that run.
    const feedBefore = query(databasePath, 'SELECT * FROM feed_entries ORDER BY seq');
    cms.store.upsertArticle(rawArticle({ id: 'edited', slug: 'edited', section_slug: 'news', title: 'Corrected headline', updated_at: new Date().toISOString() }));
    cms.store.upsertArticle(rawArticle({ id: 'taken-down', slug: 'taken-down', section_slug: 'news', status: 'archived', updated_at: new Date().toISOString() }));
    await sync();
    const snapshot = new Database(databasePath);
    snapshot.transaction(() => {
      snapshot.exec('DELETE FROM feed_entries');
      const insert = snapshot.prepare('INSERT INTO feed_entries (seq, locale, slug, effective_ms, kind, fingerprint) VALUES (@seq, @locale, @slug, @effective_ms, @kind, @fingerprint)');
      for (const row of feedBefore) insert.run(row);
    })();
    snapshot.close();
    expect(query(databasePath, `SELECT title FROM articles WHERE slug = 'edited'`)).toEqual([{ title: 'Corrected headline' }]);
    expect(query(databasePath, `SELECT slug FROM articles WHERE slug = 'taken-down'`)).toEqual([]);
    // The partner cannot know: nothing after its cursor, and the takedown looks like a typo.
    expect((await readFeed(start.next)).changes).toEqual([]);
    expect((await get('/api/v1/articles/taken-down')).body.error.code).toBe('not_found');

    // The CMS has nothing new for the new worker: only reconciling the feed can tell partners.
    await sync('--full');

    const after = await readFeed(start.next);
    expect(after.changes.map((c) => [c.type, c.slug]).sort()).toEqual([
      ['delete', 'taken-down'],
      ['upsert', 'edited'],
    ]);
    expect(after.changes.find((c) => c.slug === 'edited')!.article!.title).toBe('Corrected headline');
    const removed = await get('/api/v1/articles/taken-down');
    expect(removed.status).toBe(404);
    expect(removed.body.error.code).toBe('article_removed');

    // Said once: the next full sync finds nothing more to tell.
    await sync('--full');
    expect((await readFeed(after.next)).changes).toEqual([]);
  }, 180_000);

  it('catches up a manual fix made with SQL: an article deleted by hand is a delete in the feed', async () => {
    const start = await readFeed(undefined);
    // An operator removes an article by hand (an urgent legal takedown) and the CMS unpublishes it.
    const snapshot = new Database(databasePath);
    snapshot.prepare(`DELETE FROM articles WHERE slug = 'kept'`).run();
    snapshot.close();
    cms.store.upsertArticle(rawArticle({ id: 'kept', slug: 'kept', section_slug: 'news', status: 'archived', updated_at: new Date().toISOString() }));

    await sync('--full');

    expect((await readFeed(start.next)).changes.map((c) => [c.type, c.slug])).toEqual([['delete', 'kept']]);
    expect((await get('/api/v1/articles/kept')).body.error.code).toBe('article_removed');
  }, 120_000);
});
