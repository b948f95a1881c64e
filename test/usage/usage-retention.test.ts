import Database from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { openKeysWriter } from '../../src/db/keys/keys-connection.js';
import { addDays, readUsage, USAGE_RETENTION_DAYS, writeUsage } from '../../src/db/keys/usage-counts.js';
import { tempDir } from '../support/snapshot-fixture.js';

/*
 * Retention on a real keys database: days older than 400 are deleted, and the articles read
 * of a day are folded into its count two days later, with the count unchanged.
 */

const dir = tempDir();
afterAll(() => dir.cleanup());

it('keeps 400 days and folds the articles of days older than two into their count', () => {
  const path = dir.path('keys.db');
  openKeysWriter(path, { busyTimeoutMs: 1_000, create: true }).db.$client.close();
  const db = new Database(path);
  try {
    db.prepare(`INSERT INTO api_keys (partner, prefix, hash, created_at) VALUES ('P', 'lsk_x', 'h', '2026-01-01T00:00:00Z')`).run();
    const today = '2026-11-28';
    const oldest = addDays(today, -(USAGE_RETENTION_DAYS - 1));
    const days = [addDays(oldest, -1), oldest, addDays(today, -3), addDays(today, -2), addDays(today, -1), today];
    const one = [1, 0, 0, 0, 0, 0, 0, 0];
    writeUsage(db, {
      counts: days.map((day) => ({ keyId: 1, day, counts: one })),
      articles: days.flatMap((day) => ['a', 'b', 'c'].map((slug) => ({ keyId: 1, day, locale: 'en', slug }))),
    });
    // Written again by a second process: counts add, articles stay distinct.
    writeUsage(db, { counts: [{ keyId: 1, day: today, counts: one }], articles: [{ keyId: 1, day: today, locale: 'en', slug: 'a' }] }, { today });
    const rows = readUsage(db, {});
    expect(rows.map((r) => [r.day, r.articles, r.distinct_articles])).toEqual([
      [oldest, 1, 3],
      [addDays(today, -3), 1, 3],
      [addDays(today, -2), 1, 3],
      [addDays(today, -1), 1, 3],
      [today, 2, 3],
    ]);
    // Folded: the article rows of days before today-2 are gone, their count kept.
    const kept = db.prepare('SELECT DISTINCT day FROM key_usage_articles ORDER BY day').pluck().all();
    expect(kept).toEqual([addDays(today, -2), addDays(today, -1), today]);
    // Folding again changes nothing.
    writeUsage(db, { counts: [], articles: [] }, { today });
    expect(readUsage(db, {}).map((r) => r.distinct_articles)).toEqual([3, 3, 3, 3, 3]);
  } finally {
    db.close();
  }
});
