import { CACHE_CONTROL } from '../../../src/http/cache/representation.js';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openWriter } from '../../../src/db/sqlite/connection.js';
import { setFeedPending } from '../../../src/db/snapshot/feed-write.js';
import { changeListSchema, errorSchema } from '../../../src/http/contract/response-schemas.js';
import { article, Mirror, section, startFeedHarness, type FeedHarness } from '../../support/feed-harness.js';
import { query } from '../../support/worker.js';
import { keysPathFor, startApi } from '../../support/api.js';
import { formatUtcSeconds } from '../../../src/lib/time.js';

let h: FeedHarness;

beforeEach(async () => {
  h = await startFeedHarness();
  h.cms.store.upsertSection('en', section('news'));
  h.cms.store.upsertSection('en', section('old', { position: 2 }));
  h.cms.store.upsertSection('zh', section('news'));
});
afterEach(async () => {
  await h?.close();
});

function publish(id: string, overrides: Parameters<typeof article>[1] extends infer O ? Partial<O> : never = {}) {
  h.cms.store.upsertArticle(article(id, { updated_at: h.nowIso(), ...overrides }));
}
function edit(id: string, patch: Record<string, unknown>) {
  const current = h.cms.store.getArticle(id)!;
  h.cms.store.upsertArticle({ ...current, ...patch, updated_at: h.nowIso() });
}

async function expectMirrorEqualsCatalogue(mirror: Mirror) {
  await mirror.follow();
  const catalogue = await h.catalogue(mirror.locale);
  expect(Object.fromEntries(mirror.articles)).toEqual(Object.fromEntries(catalogue));
}

describe('GET /api/v1/changes', () => {
  it('reads the whole exposed catalogue as upserts from the beginning, in the contract shape', async () => {
    publish('a');
    publish('b');
    publish('draft', { status: 'draft' });
    await h.sync('full');
    const { status, body } = await h.changes('en', undefined);
    expect(status).toBe(200);
    expect(changeListSchema.parse(body)).toEqual(body);
    expect(body.data.map((c) => [c.type, c.slug])).toEqual([
      ['upsert', 'story-a'],
      ['upsert', 'story-b'],
    ]);
    expect(body.meta).toMatchObject({ locale: 'en', limit: 100, since: null, has_more: false });
    const list = await h.catalogue('en');
    expect(body.data[0]!.article).toEqual(list.get('story-a'));
  });

  it('reports every kind of takedown as a delete and a slug rename as a delete plus an upsert', async () => {
    for (const id of ['unpub', 'archived', 'gone', 'moved', 'renamed', 'kept']) publish(id);
    publish('in-old', { section_slug: 'old' });
    await h.sync('full');
    const mirror = new Mirror(h, 'en', 3);
    await expectMirrorEqualsCatalogue(mirror);

    h.clock.advance(60_000);
    edit('unpub', { status: 'draft' });
    edit('archived', { status: 'archived' });
    h.cms.store.removeArticle('gone');
    edit('renamed', { slug: 'story-renamed-2' });
    h.cms.store.upsertSection('en', section('old', { position: 2, active: false, updated_at: h.nowIso() }));
    await h.sync('incremental');
    h.clock.advance(1_000);
    // A delete from the CMS is only seen by a full listing.
    await h.sync('full');
    const { body } = await h.changes('en', mirror.cursor);
    const changes = Object.fromEntries(body.data.map((c) => [c.slug, c.type]));
    expect(changes).toEqual({
      'story-unpub': 'delete',
      'story-archived': 'delete',
      'story-gone': 'delete',
      'story-renamed': 'delete',
      'story-renamed-2': 'upsert',
      'story-in-old': 'delete',
    });
    await expectMirrorEqualsCatalogue(mirror);
  });

  it('answers 404 article_removed for a slug whose delete is retained, and not_found for a typo', async () => {
    publish('x');
    await h.sync('full');
    h.clock.advance(60_000);
    edit('x', { status: 'archived' });
    await h.sync('incremental');
    const removed = await h.api.request.get('/api/v1/articles/story-x').set('X-API-Key', h.key);
    expect(removed.status).toBe(404);
    expect(removed.body.error.code).toBe('article_removed');
    expect(removed.headers['cache-control']).toBe('no-store');
    const typo = await h.api.request.get('/api/v1/articles/story-y').set('X-API-Key', h.key);
    expect(typo.body.error.code).toBe('not_found');
    // Health shows the feed's size and its oldest retained delete.
    const health = await h.api.request.get('/health');
    expect(health.body.feed).toEqual({ entries: 1, oldest_delete_at: h.nowIso() });
  });

  it('lets a scheduled article enter the feed by itself at its time, ordered before later changes', async () => {
    publish('now');
    publish('later', { published_at: '2026-11-01T09:00:00Z' });
    await h.sync('full');
    const mirror = new Mirror(h, 'en');
    await mirror.follow();
    expect([...mirror.articles.keys()]).toEqual(['story-now']);

    h.clock.set('2026-11-01T09:00:00Z');
    await expectMirrorEqualsCatalogue(mirror);
    expect([...mirror.articles.keys()].sort()).toEqual(['story-later', 'story-now']);
    const [scheduled] = mirror.received.slice(-1);
    expect(scheduled).toBe('upsert story-later 2026-11-01T09:00:00Z');

    h.clock.advance(30_000);
    edit('now', { title: 'Edited after the scheduled one' });
    await h.sync('incremental');
    const { body } = await h.changes('en', undefined);
    expect(body.data.map((c) => c.slug)).toEqual(['story-later', 'story-now']);
    await expectMirrorEqualsCatalogue(mirror);
  });

  it('shows a scheduled article that came due while a sync was applying once the sync ends, though the sync changed nothing', async () => {
    publish('now');
    publish('later', { published_at: '2026-11-01T09:00:00Z' });
    await h.sync('full');
    const setPending = (ms: number | null) => {
      const db = openWriter(h.databasePath, { busyTimeoutMs: 5_000 });
      try {
        setFeedPending(db, ms);
      } finally {
        db.$client.close();
      }
    };
    // A sync is applying (its pending mark is 08:59:30) when the scheduled time passes.
    setPending(Date.parse('2026-11-01T08:59:30Z'));
    h.clock.set('2026-11-01T09:00:00Z');
    const during = await h.changes('en', undefined);
    expect(during.body.data.map((c) => c.slug)).toEqual(['story-now']);
    // Dated at what it saw: not at the scheduled article it leaves out.
    const headers = { 'X-API-Key': h.key };
    const duringRes = await fetch(`${h.api.url}/api/v1/changes?locale=en`, { headers });
    const lastModified = duringRes.headers.get('last-modified')!;
    expect(Date.parse(lastModified)).toBeLessThan(Date.parse('2026-11-01T09:00:00Z'));
    // It commits with nothing to change: the content version stays, the mark goes.
    setPending(null);
    const after = await h.changes('en', undefined);
    expect(after.body.data.map((c) => c.slug)).toEqual(['story-now', 'story-later']);
    // A partner revalidating by date gets the page with the article, not a 304.
    const revalidated = await fetch(`${h.api.url}/api/v1/changes?locale=en`, { headers: { ...headers, 'If-Modified-Since': lastModified } });
    expect(revalidated.status).toBe(200);
  });

  it('never skips or repeats a change when syncs run between two page reads', async () => {
    for (let i = 0; i < 12; i++) publish(`p${i}`);
    await h.sync('full');
    const mirror = new Mirror(h, 'en', 4);
    expect(await mirror.readPage()).toBe(true);
    const read = [...mirror.articles.keys()].map((slug) => slug.replace('story-', ''));
    const unread = Array.from({ length: 12 }, (_, i) => `p${i}`).filter((id) => !read.includes(id));
    // Between pages: an edit of an article already read, one not read yet, a takedown, a new one.
    h.clock.advance(60_000);
    edit(read[0]!, { title: 'edited' });
    edit(unread[0]!, { title: 'edited' });
    edit(unread[1]!, { status: 'draft' });
    publish('new');
    await h.sync('incremental');
    expect(await mirror.readPage()).toBe(true);
    h.clock.advance(60_000);
    edit(read[1]!, { title: 'edited' });
    await h.sync('full');
    await expectMirrorEqualsCatalogue(mirror);
    // Each slug arrives once per change it had after the reader's cursor passed it.
    const count = (id: string) => mirror.received.filter((r) => r.split(' ')[1] === `story-${id}`).length;
    expect(count(read[0]!)).toBe(2);
    expect(count(read[1]!)).toBe(2);
    expect(count(unread[0]!)).toBe(1);
    // Taken down before the reader got to it: the reader sees only the delete.
    expect(mirror.received.filter((r) => r.split(' ')[1] === `story-${unread[1]}`).map((r) => r.split(' ')[0])).toEqual(['delete']);
    expect(count('new')).toBe(1);
    expect(new Set(mirror.received).size).toBe(mirror.received.length);
  });

  it('keeps the same next and ETag while nothing changes, and answers 304 to a poll with it', async () => {
    publish('a');
    await h.sync('full');
    const first = await h.changes('en', undefined);
    const poll = await h.api.request.get(`/api/v1/changes?since=${first.body.meta.next}`).set('X-API-Key', h.key);
    expect(poll.status).toBe(200);
    expect(poll.body.data).toEqual([]);
    expect(poll.body.meta.next).toBe(first.body.meta.next);
    expect(poll.headers['cache-control']).toBe(CACHE_CONTROL);
    h.clock.advance(600_000);
    await h.sync('incremental');
    const again = await h.api.request
      .get(`/api/v1/changes?since=${first.body.meta.next}`)
      .set('X-API-Key', h.key)
      .set('If-None-Match', poll.headers.etag!);
    expect(again.status).toBe(304);
  });

  it('refuses malformed and foreign cursors with 400 invalid_cursor', async () => {
    publish('a');
    await h.sync('full');
    for (const since of ['nope', 'c_zzzzzzzz_1_1', 'c_', '']) {
      const res = await h.api.request.get(`/api/v1/changes?since=${encodeURIComponent(since)}`).set('X-API-Key', h.key);
      if (since === '') continue; // an empty since is a malformed cursor too, checked below
      expect(res.status).toBe(400);
      expect(errorSchema.parse(res.body).error).toMatchObject({ code: 'invalid_cursor', param: 'since' });
      expect(res.body.error.message).toMatch(/without since/);
      expect(res.headers['cache-control']).toBe('no-store');
    }
    const empty = await h.api.request.get('/api/v1/changes?since=').set('X-API-Key', h.key);
    expect(empty.body.error.code).toBe('invalid_cursor');

    // Well-formed and of this feed, but dated a year ahead (a damaged or made-up cursor):
    // answered with nothing for ever, were it taken.
    const next = (await h.changes('en', undefined)).body.meta.next;
    const [, epoch, ms, seq, mark] = /^c_([0-9a-z]+)_([0-9a-z]+)_([0-9a-z]+)(_[0-9a-z]+_[0-9a-z]+)$/.exec(next)!;
    const future = `c_${epoch}_${(parseInt(ms!, 36) + 365 * 86_400_000).toString(36)}_${seq}${mark}`;
    const res = await h.api.request.get(`/api/v1/changes?since=${future}`).set('X-API-Key', h.key);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_cursor');
    expect((await h.changes('en', next)).status).toBe(200);
  });

  it('keeps a cursor valid when the scheduled article it was handed out past is taken back', async () => {
    publish('now');
    await h.sync('full');
    h.clock.advance(60_000);
    publish('later', { published_at: formatUtcSeconds(h.clock() + 86_400_000) });
    await h.sync('incremental');
    const cursor = (await h.changes('en', undefined)).body.meta.next;
    h.clock.advance(60_000);
    edit('later', { status: 'draft' });
    await h.sync('incremental');
    const again = await h.changes('en', cursor);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.data).toEqual([]);
  });

  it('answers a cursor from a newer copy of the same feed (a replica one commit behind) with nothing new yet', async () => {
    publish('a');
    await h.sync('full');
    const replicaPath = h.databasePath.replace(/\.db$/, '.replica.db');
    const primary = new Database(h.databasePath);
    primary.exec(`VACUUM INTO '${replicaPath}'`);
    primary.close();
    const replica = await startApi({ databasePath: replicaPath, keysDatabasePath: keysPathFor(h.databasePath), clock: h.clock });
    try {
      h.clock.advance(60_000);
      publish('b');
      await h.sync('incremental');
      const cursor = (await h.changes('en', undefined)).body.meta.next;
      const res = await replica.request.get(`/api/v1/changes?since=${cursor}`).set('X-API-Key', h.key);
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toEqual([]);
      expect(res.body.meta.next).toBe(cursor);
    } finally {
      await replica.close();
    }
    const limit = await h.api.request.get('/api/v1/changes?limit=101').set('X-API-Key', h.key);
    expect(limit.body.error).toMatchObject({ code: 'invalid_parameter', param: 'limit' });
  });

  it('prunes deletes older than the retention and then refuses cursors from before them', async () => {
    publish('a');
    publish('b');
    await h.sync('full');
    const early = (await h.changes('en', undefined)).body.meta.next;
    h.clock.advance(60_000);
    edit('a', { status: 'draft' });
    await h.sync('incremental');
    expect((await h.changes('en', early)).body.data.map((c) => c.slug)).toEqual(['story-a']);
    const afterDelete = (await h.changes('en', early)).body.meta.next;

    h.clock.advance(31 * 86_400_000);
    await h.sync('full');
    expect(query(h.databasePath, `SELECT * FROM feed_entries WHERE kind = 'delete'`)).toEqual([]);
    const expired = await h.changes('en', early);
    expect(expired.status).toBe(400);
    expect((expired.body as unknown as { error: { code: string } }).error.code).toBe('invalid_cursor');
    // A cursor at or after the pruned delete continues.
    expect((await h.changes('en', afterDelete)).status).toBe(200);
    // The detail of the pruned slug is a plain not_found again.
    const detail = await h.api.request.get('/api/v1/articles/story-a').set('X-API-Key', h.key);
    expect(detail.body.error.code).toBe('not_found');
  });

  it('adds nothing to the feed when a sync fails', async () => {
    publish('a');
    await h.sync('full');
    const before = query(h.databasePath, 'SELECT * FROM feed_entries ORDER BY seq');
    h.clock.advance(60_000);
    edit('a', { title: 'changed' });
    h.cms.failNext(20, { status: 500 });
    const summary = await h.worker.run('incremental');
    expect(summary.status).toBe('failed');
    expect(query(h.databasePath, 'SELECT * FROM feed_entries ORDER BY seq')).toEqual(before);
    expect(query(h.databasePath, 'SELECT pending_ms FROM feed_state')).toEqual([{ pending_ms: null }, { pending_ms: null }]);
  });
});

describe('GET /api/v1/articles?updated_since', () => {
  it('lists only articles updated at or after the instant, with any offset', async () => {
    publish('old', { updated_at: '2026-10-20T08:00:00Z' });
    publish('new', { updated_at: '2026-10-21T08:00:00Z' });
    await h.sync('full');
    const get = (v: string) => h.api.request.get(`/api/v1/articles?updated_since=${v}`).set('X-API-Key', h.key);
    const since = await get(encodeURIComponent('2026-10-21T16:00:00+08:00'));
    expect(since.body.data.map((a: { slug: string }) => a.slug)).toEqual(['story-new']);
    expect(since.body.meta).toMatchObject({ total: 1, pages: 1 });
    // An unencoded + arrives as a space: read as the offset it was meant to be.
    const plus = await get('2026-10-21T16:00:01+08:00');
    expect(plus.body.data).toEqual([]);
    expect((await get('2026-10-01T00:00:00Z')).body.meta.total).toBe(2);
    const bad = await get('yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_parameter', param: 'updated_since' });
  });
});
