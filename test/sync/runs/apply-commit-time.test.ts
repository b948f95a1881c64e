import { afterAll, describe, expect, it } from 'vitest';
import { openWriter } from '../../../src/db/sqlite/connection.js';
import { formatUtcSeconds } from '../../../src/lib/time.js';
import { applyStaged } from '../../../sync/apply.js';
import { parseArticle, parseSection } from '../../../sync/cms/schemas.js';
import { Staging } from '../../../sync/staging.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { query } from '../../support/worker.js';

/*
 * Last-Modified follows snapshot_state.changed_at. A reader during a long apply still saw the
 * old content: the change must be dated when the apply commits, not when it began, or a
 * partner revalidating with If-Modified-Since between the two would be told nothing changed.
 */

const dir = tempDir('apply-commit-');
afterAll(() => dir.cleanup());

describe('the apply transaction', () => {
  it('dates a locale synced and changed when it commits, read after the writes, not when it began', () => {
    const db = openWriter(dir.path('snapshot.db'), { busyTimeoutMs: 5_000 });
    try {
      const staging = new Staging(db);
      const section = parseSection(rawSection({ slug: 'fiber' }), 'en');
      const article = parseArticle(rawArticle({ slug: 'hello', section_slug: 'fiber' }), 'en');
      if (!section.ok || !article.ok) throw new Error('fixture rejected');
      staging.stagePage('en', [article.record], []);
      const began = Date.parse('2026-11-01T10:00:00Z');
      const articlesWhenRead: number[] = [];
      const committingAt = () => {
        articlesWhenRead.push(db.$client.prepare('SELECT count(*) FROM articles').pluck().get() as number);
        return began + 33_000;
      };
      const outcomes = applyStaged(db, staging, [{ locale: 'en', sections: [section.record], mode: 'full', removeMissing: true }], formatUtcSeconds(began), {
        nowMs: began,
        committingAt,
      });
      expect(outcomes.get('en')!.changed).toBe(true);
      // Read once, with the article already written: after the writes, not before them.
      expect(articlesWhenRead).toEqual([1]);
      expect(query(dir.path('snapshot.db'), `SELECT synced_at, changed_at FROM snapshot_state WHERE locale = 'en'`)).toEqual([
        { synced_at: '2026-11-01T10:00:33Z', changed_at: '2026-11-01T10:00:33Z' },
      ]);
    } finally {
      db.$client.close();
    }
  });
});
