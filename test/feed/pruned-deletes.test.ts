import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Locale } from '../../src/locale.js';
import { article, section, startFeedHarness, type FeedHarness } from '../support/feed-harness.js';
import { FeedReader, retainedDeletes } from './reader.js';

/*
 * Issue 34: the change feed after deletes are pruned. FEED_RETENTION_DAYS is 1 and the clock
 * that the worker and the API share moves by days, so every pruning here is a real one, done by
 * the worker's own sync, read through the real API.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let h: FeedHarness;

beforeEach(async () => {
  h = await startFeedHarness({ feedRetentionDays: 1 });
  h.cms.store.upsertSection('en', section('news'));
  h.cms.store.upsertSection('zh', section('news'));
});
afterEach(async () => {
  await h?.close();
});

function publish(id: string, locale: Locale = 'en') {
  h.cms.store.upsertArticle(article(id, { locale, updated_at: h.nowIso() }));
}
function takeDown(id: string) {
  h.cms.store.upsertArticle({ ...h.cms.store.getArticle(id)!, status: 'archived', updated_at: h.nowIso() });
}
function edit(id: string) {
  h.cms.store.upsertArticle({ ...h.cms.store.getArticle(id)!, title: `Edited ${h.nowIso()}`, updated_at: h.nowIso() });
}
/** Moves the shared clock and syncs: the sync prunes the deletes older than a day. */
async function syncAfter(ms: number) {
  h.clock.advance(ms);
  await h.sync('incremental');
}

/** A reader that went to the head holds the catalogue; a fresh read held it plus the retained deletes, each once. */
async function expectComplete(reader: FeedReader, fresh: boolean) {
  expect(Object.fromEntries(reader.copy)).toEqual(Object.fromEntries(await h.catalogue(reader.locale)));
  if (!fresh) return;
  const expected = [...[...(await h.catalogue(reader.locale)).keys()].map((s) => `upsert ${s}`), ...retainedDeletes(h, reader.locale).map((s) => `delete ${s}`)];
  expect([...reader.changes].sort()).toEqual(expected.sort());
}

describe('the change feed after deletes are pruned', () => {
  it('lets a read from the beginning after a pruning go page by page to the head (the issue as reported)', async () => {
    for (let i = 0; i < 6; i++) publish(`e${i}`);
    await h.sync('full');
    const beforeTakedown = (await h.changes('en', undefined)).body.meta.next;
    h.clock.advance(HOUR);
    takeDown('e3');
    await h.sync('incremental');
    expect(retainedDeletes(h, 'en')).toEqual(['story-e3']);

    await syncAfter(2 * DAY);
    expect(retainedDeletes(h, 'en')).toEqual([]);
    // The contract's rule: a cursor from before the pruned delete is refused.
    const refused = await h.changes('en', beforeTakedown);
    expect(refused.status).toBe(400);
    expect((refused.body as unknown as { error: { code: string } }).error.code).toBe('invalid_cursor');

    // Starting again: page 1 ends on upserts older than the pruned delete, and page 2 still comes.
    for (const limit of [1, 2, 100]) {
      const reader = new FeedReader(h, 'en', limit);
      expect(await reader.read()).toBe(200);
      await expectComplete(reader, true);
      expect(reader.copy.size).toBe(5);
    }
  });

  it('refuses exactly the readers that could have missed a pruned delete, across several prunings, in both locales', async () => {
    for (let i = 0; i < 10; i++) publish(`e${i}`);
    for (let i = 0; i < 6; i++) publish(`z${i}`, 'zh');
    await h.sync('full');

    // Started before the first takedown: one partway (pages of 1), two at the head (pages of 100).
    const early = new FeedReader(h, 'en', 1);
    const earlyZh = new FeedReader(h, 'zh', 1);
    const pollerOnTime = new FeedReader(h, 'en', 100);
    const pollerLate = new FeedReader(h, 'en', 100);
    expect(await early.read(2)).toBe(200);
    expect(await earlyZh.read(1)).toBe(200);
    expect(await pollerOnTime.read()).toBe(200);
    expect(await pollerLate.read()).toBe(200);

    h.clock.advance(HOUR);
    takeDown('e7');
    takeDown('z4');
    edit('e3');
    await h.sync('incremental');
    // The on-time poller reads the takedown before it is pruned; the late one does not.
    expect(await pollerOnTime.read()).toBe(200);
    expect(pollerOnTime.changes.slice(-2).sort()).toEqual(['delete story-e7', 'upsert story-e3']);

    // Started after the takedowns were written, before they are pruned.
    const between = new FeedReader(h, 'en', 1);
    const betweenZh = new FeedReader(h, 'zh', 1);
    expect(await between.read(2)).toBe(200);
    expect(await betweenZh.read(1)).toBe(200);

    // First pruning.
    await syncAfter(2 * DAY);
    expect(retainedDeletes(h, 'en')).toEqual([]);
    expect(retainedDeletes(h, 'zh')).toEqual([]);
    // Positioned before a delete written after they started, now pruned: they may hold the
    // article, so they must start again.
    expect(await early.read()).toBe(400);
    expect(await earlyZh.read()).toBe(400);
    expect(await pollerLate.read()).toBe(400);
    expect(pollerLate.copy.has('story-e7')).toBe(true); // what it would have kept for ever
    // Started after the takedowns: they never had those articles, and go on to the head.
    expect(await between.read()).toBe(200);
    expect(await betweenZh.read()).toBe(200);
    await expectComplete(between, true);
    await expectComplete(betweenZh, true);
    expect(await pollerOnTime.read()).toBe(200);
    await expectComplete(pollerOnTime, false);
    // Those refused start again and reach the head, whatever the size of their pages.
    for (const reader of [early, earlyZh, pollerLate]) {
      expect(await reader.restart()).toBe(200);
      await expectComplete(reader, true);
    }

    // Started after the first pruning; one stops at the head and does not poll again in time.
    const afterFirst = new FeedReader(h, 'en', 1);
    const afterFirstIdle = new FeedReader(h, 'en', 100);
    expect(await afterFirst.read(3)).toBe(200);
    expect(await afterFirstIdle.read()).toBe(200);

    h.clock.advance(HOUR);
    takeDown('e1');
    takeDown('z0');
    publish('e10');
    await h.sync('incremental');
    expect(retainedDeletes(h, 'en')).toEqual(['story-e1']);
    const beforeSecond = new FeedReader(h, 'zh', 1);
    expect(await beforeSecond.read(1)).toBe(200);
    expect(await between.read()).toBe(200); // a poller that reads the takedown in time

    // Second pruning.
    await syncAfter(2 * DAY);
    expect(retainedDeletes(h, 'en')).toEqual([]);
    // afterFirst is positioned after e1's old upsert, before its delete: it holds story-e1.
    expect(afterFirst.copy.has('story-e1')).toBe(true);
    expect(await afterFirst.read()).toBe(400);
    expect(await afterFirstIdle.read()).toBe(400);
    expect(await beforeSecond.read()).toBe(200);
    await expectComplete(beforeSecond, true);
    expect(await between.read()).toBe(200);
    await expectComplete(between, false);
    expect(await pollerOnTime.read()).toBe(400); // it did not poll between the second takedown and its pruning

    // Started after both prunings: pages of 1 and of 100, both locales.
    for (const locale of ['en', 'zh'] as const) {
      for (const limit of [1, 100]) {
        const reader = new FeedReader(h, locale, limit);
        expect(await reader.read()).toBe(200);
        await expectComplete(reader, true);
      }
    }
    expect((await h.catalogue('en')).size).toBe(9);
    expect((await h.catalogue('zh')).size).toBe(4);
  });

  it('keeps a read that started before a pruning going when the pruned deletes were written before it started', async () => {
    for (let i = 0; i < 8; i++) publish(`e${i}`);
    await h.sync('full');
    h.clock.advance(HOUR);
    takeDown('e6');
    await h.sync('incremental');
    h.clock.advance(HOUR);
    const reader = new FeedReader(h, 'en', 1);
    expect(await reader.read(2)).toBe(200);
    // A day passes, one page a sync: the delete is pruned midway; then a takedown after the read started.
    h.clock.advance(DAY);
    takeDown('e7');
    await h.sync('incremental');
    expect(retainedDeletes(h, 'en')).toEqual(['story-e7']);
    expect(await reader.read()).toBe(200);
    await expectComplete(reader, true);
    expect(reader.changes).toContain('delete story-e7');
    expect(reader.changes).not.toContain('delete story-e6');
  });

  it('keeps cursors handed out before the upgrade working where they are still valid', async () => {
    for (let i = 0; i < 4; i++) publish(`e${i}`);
    await h.sync('full');
    // Today's format: c_<epoch>_<ms>_<seq>, without the mark.
    const legacy = (next: string) => /^(c_[0-9a-z]+_[0-9a-z]+_[0-9a-z]+)_[0-9a-z]+_[0-9a-z]+$/.exec(next)![1]!;
    const beforeTakedown = legacy((await h.changes('en', undefined, 2)).body.meta.next);
    h.clock.advance(HOUR);
    takeDown('e3');
    await h.sync('incremental');
    const atHead = legacy((await h.changes('en', undefined)).body.meta.next);
    // Until anything is pruned, an old cursor reads on as before, and what it is handed next is of the new format.
    const before = await h.changes('en', beforeTakedown, 100);
    expect(before.status).toBe(200);
    expect(before.body.data.map((c) => `${c.type} ${c.slug}`)).toEqual(['upsert story-e2', 'delete story-e3']);
    expect(before.body.meta.next).toMatch(/^c_[0-9a-z]+_[0-9a-z]+_[0-9a-z]+_[0-9a-z]+_[0-9a-z]+$/);

    await syncAfter(2 * DAY);
    // After the pruning, an old cursor positioned after the pruned delete continues...
    publish('e4');
    await syncAfter(HOUR);
    const continued = await h.changes('en', atHead);
    expect(continued.status).toBe(200);
    expect(continued.body.data.map((c) => `${c.type} ${c.slug}`)).toEqual(['upsert story-e4']);
    // ...and one before it is refused: it carries no mark to say when its read started.
    expect((await h.changes('en', beforeTakedown)).status).toBe(400);
  });

  it('refuses a mark made up to pass over a pruned delete when it lies in the future', async () => {
    publish('e0');
    await h.sync('full');
    const next = (await h.changes('en', undefined)).body.meta.next;
    const [, head, markMs, markSeq] = /^(c_[0-9a-z]+_[0-9a-z]+_[0-9a-z]+)_([0-9a-z]+)_([0-9a-z]+)$/.exec(next)!;
    const future = `${head}_${(parseInt(markMs!, 36) + 365 * DAY).toString(36)}_${markSeq}`;
    expect((await h.changes('en', future)).status).toBe(400);
    expect((await h.changes('en', next)).status).toBe(200);
  });
});
