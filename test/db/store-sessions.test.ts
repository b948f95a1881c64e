import { afterAll, describe, expect, it } from 'vitest';
import { KeysStore } from '../../src/db/keys/keys-store.js';
import { SnapshotStore } from '../../src/db/snapshot/snapshot-store.js';
import { revokeKey } from '../../src/keys/manage.js';
import { addKey, keysPathFor, memoryLogger, withKeys } from '../support/api.js';
import { rawArticle } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { openReader } from '../../src/db/sqlite/connection.js';

/*
 * When each store notices a commit by another connection: once per turn of the event loop
 * (the requests of one turn were all received before its first look, and share it; a
 * request sent after a commit is read in a later turn).
 */

const dir = tempDir('store-sessions-');
const snapshotPath = dir.path('snapshot.db');
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

afterAll(() => dir.cleanup());

describe('store sessions', () => {
  it('the keys store sees a commit from the next turn of the event loop', async () => {
    buildSnapshot(snapshotPath, { sections: [], articles: [] });
    const { id } = addKey(snapshotPath);
    const store = new KeysStore(keysPathFor(snapshotPath), 1_000, memoryLogger().logger);
    try {
      const first = store.session();
      withKeys(snapshotPath, (db) => revokeKey(db, id, () => Date.now()));
      // The same turn: the look taken at its first call stands.
      expect(store.session()).toBe(first);
      await nextTurn();
      const next = store.session();
      expect(next.generation).toBeGreaterThan(first.generation);
      await nextTurn();
      expect(store.session()).toBe(next);
    } finally {
      store.close();
    }
  });

  it('the snapshot store sees a commit from the next turn of the event loop', async () => {
    const path = dir.path('turns.db');
    buildSnapshot(path, { sections: [], articles: [] });
    const store = new SnapshotStore(path, 1_000, memoryLogger().logger, openReader);
    try {
      const first = store.session();
      buildSnapshot(path, { sections: [], articles: [rawArticle({ slug: 'later' })] });
      expect(store.session()).toBe(first);
      await nextTurn();
      const next = store.session();
      expect(next.generation).toBeGreaterThan(first.generation);
      expect(next.db).toBe(first.db);
      await nextTurn();
      expect(store.session()).toBe(next);
    } finally {
      store.close();
    }
  });
});
