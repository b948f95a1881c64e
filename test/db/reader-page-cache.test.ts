import { afterAll, describe, expect, it } from 'vitest';
import { openReader } from '../../src/db/sqlite/connection.js';
import { openKeysReader } from '../../src/db/keys/keys-connection.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { addKey, keysPathFor } from '../support/api.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';

const dir = tempDir();
afterAll(() => dir.cleanup());

// better-sqlite3 builds SQLite with a 16 MB page cache per connection; the API's readers (its
// main thread and each search thread) keep 2 MB each, a fixed part of the API's memory
// (decision 0076). A negative cache_size is in KiB.
describe('read-only connections', () => {
  it('keep a 2 MB page cache: the snapshot reader (main thread and search threads) and the keys reader', () => {
    const path = dir.path('snapshot.db');
    buildSnapshot(path, { sections: [rawSection({ slug: 'fiber' })], articles: [rawArticle({ section_slug: 'fiber' })] });
    addKey(path);
    const snapshot = openReader(path, { busyTimeoutMs: 1_000 });
    const keys = openKeysReader(keysPathFor(path), { busyTimeoutMs: 1_000 });
    try {
      expect(snapshot.$client.pragma('cache_size', { simple: true })).toBe(-2_048);
      expect(keys.$client.pragma('cache_size', { simple: true })).toBe(-2_048);
    } finally {
      snapshot.$client.close();
      keys.$client.close();
    }
  });
});
