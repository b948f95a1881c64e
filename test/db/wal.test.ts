import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openWriter, type Db } from '../../src/db/sqlite/connection.js';
import { fileSizes, truncateWal, WAL_SIZE_LIMIT_BYTES } from '../../src/db/sqlite/wal.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { tempDir } from '../support/snapshot-fixture.js';
import { startTestCms } from '../fakes/test-cms.js';
import { startWorker } from '../support/worker.js';

const dir = tempDir();
const opened: Array<{ close(): void }> = [];

afterAll(() => dir.cleanup());

afterEach(() => {
  for (const handle of opened.splice(0)) handle.close();
});

function writer(name: string): Db {
  const db = openWriter(dir.path(name), { busyTimeoutMs: 5_000 });
  opened.push({ close: () => db.$client.close() });
  return db;
}

// About `mb` MB written in one transaction, as a big sync would.
function bigWrite(db: Db, mb: number): void {
  db.$client.exec('CREATE TABLE IF NOT EXISTS filler (id INTEGER PRIMARY KEY, blob BLOB)');
  const insert = db.$client.prepare('INSERT INTO filler (blob) VALUES (?)');
  db.$client.transaction(() => {
    for (let i = 0; i < mb * 16; i++) insert.run(Buffer.alloc(64 * 1024, i % 251));
  })();
  db.$client.exec('DELETE FROM filler');
}

describe('WAL truncation', () => {
  it('truncates the WAL to zero bytes after a big write when no reader is in the way', () => {
    const db = writer('quiet.db');
    bigWrite(db, 8);
    expect(fileSizes(db.$client.name).walBytes).toBeGreaterThan(4 * 1024 * 1024);
    const outcome = truncateWal(db);
    expect(outcome).toMatchObject({ truncated: true, busy: false, walBytes: 0 });
    expect(outcome.databaseBytes).toBeGreaterThan(0);
  });

  it('leaves the WAL to a later checkpoint when a reader holds it, without throwing, then truncates once it is gone', () => {
    const db = writer('busy.db');
    bigWrite(db, 4);
    const reader = new Database(db.$client.name, { readonly: true });
    opened.push(reader);
    // An open read transaction pins the WAL as it is now.
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM sync_runs').get();
    bigWrite(db, 1);
    const held = truncateWal(db, 50);
    expect(held.truncated).toBe(false);
    expect(held.busy).toBe(true);
    expect(held.walBytes).toBeGreaterThan(0);
    reader.exec('COMMIT');
    expect(truncateWal(db)).toMatchObject({ truncated: true, walBytes: 0 });
  });

  it('restores the connection’s own busy timeout afterwards', () => {
    const db = writer('timeout.db');
    truncateWal(db, 10);
    expect(db.$client.pragma('busy_timeout', { simple: true })).toBe(5_000);
  });

  it('caps the WAL of every writer with journal_size_limit', () => {
    const db = writer('limit.db');
    expect(db.$client.pragma('journal_size_limit', { simple: true })).toBe(WAL_SIZE_LIMIT_BYTES);
  });

  it('leaves an empty WAL after a sync run', async () => {
    const cms = await startTestCms();
    try {
      cms.store.upsertSection('en', rawSection({ slug: 'fiber' }));
      cms.store.upsertArticles(Array.from({ length: 30 }, (_, i) => rawArticle({ slug: `a-${i}`, section_slug: 'fiber', body_markdown: 'x'.repeat(20_000) })));
      const worker = startWorker({ databasePath: dir.path('synced.db'), cmsUrl: cms.url });
      opened.push(worker);
      const summary = await worker.run('full');
      expect(summary.status).toBe('succeeded');
      expect(summary.upserted).toBe(30);
      expect(fileSizes(dir.path('synced.db')).walBytes).toBe(0);
      const line = worker.logs.map((l) => JSON.parse(l) as { msg?: string; wal?: unknown }).find((l) => l.msg === 'checkpointed the write-ahead log');
      expect(line?.wal).toMatchObject({ truncated: true, walBytes: 0 });
    } finally {
      await cms.close();
    }
  });
});
