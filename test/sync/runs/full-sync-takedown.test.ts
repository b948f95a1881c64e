import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { article, section, startFeedHarness, type FeedHarness } from '../../support/feed-harness.js';
import { query } from '../../support/worker.js';

/*
 * Issue 9 item 6: a CMS (a cache, a lagging replica) lists a record under status=published
 * whose own status says it is not published. The record's own status wins: a full sync takes
 * the article down, and the change feed says so.
 */

let h: FeedHarness;
beforeEach(async () => {
  h = await startFeedHarness();
  h.cms.store.upsertSection('en', section('news'));
  for (const id of ['one', 'two', 'three']) h.cms.store.upsertArticle(article(id, { updated_at: `2026-10-0${id.length}T08:00:00Z` }));
  await h.sync('full');
});
afterEach(async () => {
  await h?.close();
});

const slugs = () => query<{ slug: string }>(h.databasePath, `SELECT slug FROM articles ORDER BY slug`).map((r) => r.slug);

describe('full sync and a record whose own status is not published', () => {
  it('removes the article although the published listing returned it, and records a delete', async () => {
    expect(slugs()).toEqual(['story-one', 'story-three', 'story-two']);
    h.clock.advance(3_600_000);
    // The first record of the first en page (the oldest change: "one") says it is archived.
    h.cms.badRecordNext({ status: 'archived' }, 0);
    await h.sync('full');
    expect(slugs()).toEqual(['story-three', 'story-two']);
    expect(query(h.databasePath, `SELECT kind FROM feed_entries WHERE slug = 'story-one'`)).toEqual([{ kind: 'delete' }]);
    const detail = await h.api.request.get('/api/v1/articles/story-one').set('X-API-Key', h.key);
    expect(detail.body.error.code).toBe('article_removed');
  });

  it('takes it down even when the listing cannot prove what is missing', async () => {
    // Two pages of en articles (the worker asks for 7 per page).
    for (let i = 0; i < 6; i++) h.cms.store.upsertArticle(article(`more${i}`, { updated_at: `2026-10-2${i}T08:00:00Z` }));
    await h.sync('full');
    h.clock.advance(3_600_000);
    h.cms.badRecordNext({ status: 'archived' }, 0);
    // A record without a readable id on the next page: nothing may be removed for being absent.
    h.cms.badRecordNext({ id: undefined }, 0);
    const summary = await h.sync('full');
    expect(summary.warnings.join(' ')).toMatch(/nothing was removed/);
    expect(slugs()).not.toContain('story-one');
  });
});
