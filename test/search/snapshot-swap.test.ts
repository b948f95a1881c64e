import { renameSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { StoreSession } from '../../src/db/snapshot/snapshot-store.js';
import { AdmittedEngine } from '../../src/search/admitted-engine.js';
import type { SearchEngine, SearchQuery } from '../../src/search/engine.js';
import { addKey, keysPathFor, startApi, testClock } from '../support/api.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { expectError } from '../support/contract-helpers.js';

/*
 * A search awaits (a slot, a search server) while the operator moves another snapshot into
 * place. The ids it found belong to the old file, where a rebuilt one numbers its rows afresh,
 * and the connection its session was taken on is closed: it must answer 503, never another
 * file's articles nor a 500.
 */

const NOW = '2026-11-01T12:00:00Z';
const dir = tempDir('snapshot-swap-');
afterAll(() => dir.cleanup());

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** Two snapshots whose first row is a different article: `old-first` in one, `new-first` in the other. */
function snapshots(name: string) {
  const path = dir.path(`${name}.db`);
  const staged = dir.path(`${name}.staged.db`);
  const build = (target: string, first: string) =>
    buildSnapshot(target, {
      sections: [rawSection({ slug: 'fiber' })],
      articles: [first, 'laser-two'].map((slug) => rawArticle({ slug, title: `Laser ${slug}`, section_slug: 'fiber', published_at: '2026-10-01T00:00:00Z' })),
    });
  build(path, 'old-first');
  build(staged, 'new-first');
  const key = addKey(path).key;
  const swap = () => {
    for (const suffix of ['-wal', '-shm']) rmSync(path + suffix, { force: true });
    renameSync(staged, path);
  };
  return { path, key, swap };
}

describe('a search that outlives the snapshot it started on', () => {
  it('answers 503 service_unavailable, not the articles the same ids name in the new file', async () => {
    const { path, key, swap } = snapshots('hydrate');
    const held = gate();
    const reached = gate();
    // Answers the first row of the file it started on, once the test lets it.
    const engine: SearchEngine = {
      name: 'sqlite',
      followsSnapshot: false,
      search: async (session) => {
        const id = (session.db.$client.prepare(`SELECT id FROM articles WHERE slug = 'old-first'`).get() as { id: number }).id;
        reached.open();
        await held.opened;
        return { ids: [id], total: 1 };
      },
      health: async () => ({ engine: 'sqlite', status: 'ok' }),
      close: async () => {},
    };
    const api = await startApi({ databasePath: path, keysDatabasePath: keysPathFor(path), clock: testClock(NOW), engine });
    try {
      const search = api.request.get('/api/v1/search').query({ q: 'laser' }).set('X-API-Key', key).then((r) => r);
      // The search has its ids from the old file and waits: now the file is replaced.
      await reached.opened;
      swap();
      // A list request sees the new file and opens it.
      const list = await api.request.get('/api/v1/articles').set('X-API-Key', key);
      expect(list.body.data.map((a: { slug: string }) => a.slug)).toContain('new-first');
      held.open();
      expectError(await search, 503, 'service_unavailable');
    } finally {
      await api.close();
    }
  });

  it('answers 503 service_unavailable, not 500, for a search that waited for its slot on the closed connection', async () => {
    const { path, key, swap } = snapshots('queued');
    const held = gate();
    let calls = 0;
    // Reads through its session, as the Meilisearch engine reads the ids it must leave out.
    const inner: SearchEngine = {
      name: 'sqlite',
      followsSnapshot: false,
      search: async (session: StoreSession, _query: SearchQuery) => {
        session.db.$client.prepare('SELECT count(*) FROM articles').get();
        if (++calls === 1) await held.opened;
        return { ids: [], total: 0 };
      },
      health: async () => ({ engine: 'sqlite', status: 'ok' }),
      close: async () => {},
    };
    const engine = new AdmittedEngine(inner, { concurrency: 1, queue: 1, maxWaitMs: 60_000, timeoutMs: 60_000 });
    const api = await startApi({ databasePath: path, keysDatabasePath: keysPathFor(path), clock: testClock(NOW), engine });
    try {
      const first = api.request.get('/api/v1/search').query({ q: 'laser one' }).set('X-API-Key', key).then((r) => r);
      const second = api.request.get('/api/v1/search').query({ q: 'laser two' }).set('X-API-Key', key).then((r) => r);
      const queuedBy = Date.now() + 5_000;
      while (engine.stats().queued !== 1 && Date.now() < queuedBy) await new Promise((r) => setTimeout(r, 5));
      expect(engine.stats()).toMatchObject({ in_flight: 1, queued: 1 });
      swap();
      expect((await api.request.get('/api/v1/articles').set('X-API-Key', key)).status).toBe(200);
      held.open();
      expectError(await second, 503, 'service_unavailable');
      // The one that held the slot found its ids on the old file: 503 too.
      expectError(await first, 503, 'service_unavailable');
    } finally {
      await api.close();
    }
  });
});
