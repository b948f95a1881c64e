import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ArticlesPageQuery } from '../../../src/demo/cms-server.js';
import type { RawArticle } from '../../../src/demo/cms-store.js';
import type { Locale } from '../../../src/locale.js';
import { testClock } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import { parsedLogs, query, startWorker, type TestWorker } from '../../support/worker.js';

/*
 * The CMS lists oldest change first. A record updated while the worker pages moves to the
 * end, and every record after its old place moves up by one: the first record of the next
 * page slides onto a page already read and would be missed. A record unpublished mid-listing
 * does the same to a published-only listing. The worker must notice and read again.
 */

let dir: ReturnType<typeof tempDir>;
let dbPath: string;
let cms: TestCms;
let worker: TestWorker;
let clock: ReturnType<typeof testClock>;
let edits = 0;

const en = Array.from({ length: 30 }, (_, i) => rawArticle({ slug: `story-${i}`, section_slug: 'news' }));
const zh = Array.from({ length: 4 }, (_, i) => rawArticle({ locale: 'zh', slug: `zh-story-${i}`, section_slug: 'news' }));

beforeEach(async () => {
  dir = tempDir();
  dbPath = dir.path('snapshot.db');
  cms = await startTestCms();
  cms.store.upsertSection('en', rawSection({ slug: 'news' }));
  cms.store.upsertSection('zh', rawSection({ slug: 'news' }));
  cms.store.upsertArticles([...en, ...zh]);
  clock = testClock('2026-11-01T12:00:00Z');
  edits = 0;
  worker = startWorker({ databasePath: dbPath, cmsUrl: cms.url, clock, pageSize: 10 });
});

afterEach(async () => {
  cms.onPage(undefined);
  worker.close();
  await cms.close();
  dir.cleanup();
});

/** A copy that is now the newest change in the CMS (after the first sync's start, 12:00). */
function edited(raw: RawArticle, changes: Partial<RawArticle> = {}): RawArticle {
  edits += 1;
  return { ...raw, updated_at: `2026-11-01T12:${String(edits).padStart(2, '0')}:00Z`, ...changes };
}

/** Runs `fn` before the given page, on the first `times` listings only. */
function onPageOf(locale: Locale, page: number, times: number, fn: (q: ArticlesPageQuery) => void): void {
  let left = times;
  cms.onPage((q) => {
    if (left === 0 || q.locale !== locale || q.page !== page) return;
    left -= 1;
    fn(q);
  });
}

/** The published set of the CMS now, as `locale/cms_id -> title`. */
function cmsPublished(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const locale of ['en', 'zh'] as const) {
    for (const a of cms.store.queryArticles({ locale, page: 1, perPage: 1_000, publishedOnly: true }).data) out[`${locale}/${a.id}`] = a.title;
  }
  return out;
}

function snapshotArticles(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of query<{ locale: string; cms_id: string; title: string }>(dbPath, 'SELECT locale, cms_id, title FROM articles')) {
    out[`${r.locale}/${r.cms_id}`] = r.title;
  }
  return out;
}

// Reads of the published listing's first page (requests for recent changes not counted).
const firstPageReads = () =>
  cms.requests.filter((r) => r.path.startsWith('/articles?locale=en&page=1&') && r.path.includes('status=published') && !r.path.includes('updated_since=')).length;
const rereadLogged = () => parsedLogs(worker.logs).filter((l) => l.msg === 'the CMS changed while it was read; reading the listing again');

describe.each(['empty snapshot', 'previous snapshot'])('records that shift between pages (%s)', (start) => {
  beforeEach(async () => {
    if (start === 'previous snapshot') {
      expect((await worker.run('full')).status).toBe('succeeded');
      cms.requests.length = 0;
    }
  });

  it('an already-read record updated mid-listing (it moves to the end): none lost, the listing is read again', async () => {
    // story-10 would be the first record of page 2; story-0's move pushes it onto page 1.
    onPageOf('en', 2, 1, () => cms.store.upsertArticle(edited(en[0]!, { title: 'Moved to the end' })));

    const summary = await worker.run('full');

    expect(summary).toMatchObject({ status: 'succeeded', removed: 0, warnings: [] });
    expect(firstPageReads()).toBe(2);
    expect(rereadLogged()).toHaveLength(1);
    expect(snapshotArticles()).toEqual(cmsPublished());
  });

  it('a record unpublished mid-listing: no published article lost or wrongly removed, the unpublished one gone', async () => {
    onPageOf('en', 2, 1, () => cms.store.upsertArticle(edited(en[3]!, { status: 'draft', published_at: null })));

    const summary = await worker.run('full');

    expect(summary).toMatchObject({ status: 'succeeded', warnings: [] });
    expect(firstPageReads()).toBe(2);
    expect(snapshotArticles()).toEqual(cmsPublished());
    expect(snapshotArticles()).not.toHaveProperty(`en/${en[3]!.id}`);
  });

  it('a record deleted mid-listing: the others all kept, the deleted one gone', async () => {
    onPageOf('en', 3, 1, () => cms.store.removeArticle(en[4]!.id));

    const summary = await worker.run('full');

    expect(summary).toMatchObject({ status: 'succeeded', warnings: [] });
    expect(snapshotArticles()).toEqual(cmsPublished());
    expect(snapshotArticles()).not.toHaveProperty(`en/${en[4]!.id}`);
  });

  it('an incremental listing where an already-read record changes status: the newest version wins', async () => {
    if (start === 'empty snapshot') expect((await worker.run('full')).status).toBe('succeeded');
    clock.set('2026-11-01T13:00:00Z');
    // Twelve changes since the last sync: two pages of the incremental listing.
    for (let i = 0; i < 12; i++) cms.store.upsertArticle(edited(en[i]!, { title: `Edit ${i}` }));
    onPageOf('en', 2, 1, () => cms.store.upsertArticle(edited(en[0]!, { status: 'archived' })));

    const summary = await worker.run('incremental');

    expect(summary).toMatchObject({ kind: 'incremental', status: 'succeeded', removed: 1 });
    expect(snapshotArticles()).toEqual(cmsPublished());
  });

  it('a CMS that keeps changing on every read: the run succeeds, warns, and removes nothing', async () => {
    const gone = en[25]!;
    if (start === 'previous snapshot') cms.store.removeArticle(gone.id);
    let n = 0;
    onPageOf('en', 2, Number.POSITIVE_INFINITY, () => {
      n += 1;
      cms.store.upsertArticle(edited(en[n]!, { title: `Churn ${n}` }));
    });

    const summary = await worker.run('full');

    expect(summary).toMatchObject({ status: 'succeeded', removed: 0 });
    expect(summary.warnings).toEqual(['en: the CMS kept changing while it was read; nothing was removed this run']);
    expect(firstPageReads()).toBe(3);
    if (start === 'previous snapshot') expect(snapshotArticles()).toHaveProperty(`en/${gone.id}`);
    // Whatever was read is stored in its newest version; nothing stored is older than the CMS says.
    const stored = snapshotArticles();
    const published = cmsPublished();
    for (const [key, title] of Object.entries(stored)) if (key in published) expect(title, key).toBe(published[key]);
  });
});

describe('changes that cancel out in the totals', () => {
  it('one record unpublished and another published between two pages: nothing published is removed', async () => {
    expect((await worker.run('full')).status).toBe('succeeded');
    // story-10 opens page 2. Unpublishing story-3 (already read) pulls it onto page 1, and a new
    // publication keeps the total as it was: no record is seen twice, no total moves.
    const fresh = rawArticle({ slug: 'fresh', section_slug: 'news', updated_at: '2026-11-01T12:30:00Z' });
    onPageOf('en', 2, 1, () => {
      cms.store.upsertArticle(edited(en[3]!, { status: 'draft', published_at: null }));
      cms.store.upsertArticle(fresh);
    });

    const summary = await worker.run('full');

    expect(summary.status).toBe('succeeded');
    expect(snapshotArticles()).toHaveProperty(`en/${en[10]!.id}`);
    expect(snapshotArticles()).toEqual(cmsPublished());
  });
});

describe('a record deleted outright while another is published', () => {
  it('one record hard-deleted and another published between two pages: the record that slid back is kept, no delete in the feed', async () => {
    expect((await worker.run('full')).status).toBe('succeeded');
    cms.requests.length = 0;
    // story-10 opens page 2. Deleting story-3 (already read) pulls story-10 onto page 1, and a
    // new publication keeps the total: nothing seen twice, and a hard delete leaves no change.
    const fresh = rawArticle({ slug: 'fresh', section_slug: 'news', updated_at: '2026-11-01T12:30:00Z' });
    const slid = en[10]!;
    onPageOf('en', 2, 1, () => {
      cms.store.removeArticle(en[3]!.id);
      cms.store.upsertArticle(fresh);
    });

    const summary = await worker.run('full');

    expect(summary).toMatchObject({ status: 'succeeded', removed: 1, warnings: [] });
    expect(firstPageReads()).toBe(2);
    expect(snapshotArticles()).toHaveProperty(`en/${slid.id}`);
    expect(snapshotArticles()).toEqual(cmsPublished());
    expect(query(dbPath, `SELECT kind FROM feed_entries WHERE locale = 'en' AND slug = ?`, slid.slug)).toEqual([{ kind: 'upsert' }]);
  });

  it('the record that slid back was edited since the last sync (before this listing began): it is kept too', async () => {
    expect((await worker.run('full')).status).toBe('succeeded');
    clock.set('2026-11-01T13:00:00Z');
    // Edited at 12:01, then nine others: the edited record is 21st, the first of page 3.
    const slid = en[0]!;
    for (const raw of [slid, ...en.slice(20, 29)]) cms.store.upsertArticle(edited(raw, { title: `Edited ${raw.slug}` }));
    cms.requests.length = 0;
    onPageOf('en', 3, 1, () => {
      cms.store.removeArticle(en[3]!.id);
      cms.store.upsertArticle(rawArticle({ slug: 'fresh', section_slug: 'news', updated_at: '2026-11-01T13:00:00Z' }));
    });

    const summary = await worker.run('full');

    expect(summary).toMatchObject({ status: 'succeeded', removed: 1, warnings: [] });
    expect(firstPageReads()).toBe(2);
    expect(snapshotArticles()).toHaveProperty(`en/${slid.id}`, `Edited ${slid.slug}`);
    expect(snapshotArticles()).toEqual(cmsPublished());
  });

  it('with more removal candidates than are looked up one by one: one sweep finds the record that slid back, the deleted ones go', async () => {
    const more = Array.from({ length: 60 }, (_, i) => rawArticle({ slug: `more-${i}`, section_slug: 'news' }));
    cms.store.upsertArticles(more);
    expect((await worker.run('full')).status).toBe('succeeded');
    for (const raw of more.slice(0, 55)) cms.store.removeArticle(raw.id);
    cms.requests.length = 0;
    const slid = en[10]!;
    onPageOf('en', 2, 1, () => {
      cms.store.removeArticle(en[3]!.id);
      cms.store.upsertArticle(rawArticle({ slug: 'fresh', section_slug: 'news', updated_at: '2026-11-01T12:30:00Z' }));
    });

    const summary = await worker.run('full');

    expect(summary).toMatchObject({ status: 'succeeded', removed: 56, warnings: [] });
    expect(firstPageReads()).toBe(2);
    expect(snapshotArticles()).toHaveProperty(`en/${slid.id}`);
    expect(snapshotArticles()).toEqual(cmsPublished());
    // 56 candidates each time: a few pages of one sweep per read, not one lookup per candidate.
    const lookups = cms.requests.filter((r) => r.path.startsWith('/articles?locale=en&') && r.path.includes('status=published') && r.path.includes('updated_since='));
    expect(lookups.length).toBeGreaterThan(0);
    expect(lookups.length).toBeLessThan(10);
  });
});

describe('an invalid draft edited recently', () => {
  it('does not count as a change: a full sync reads the listing once and removes an article deleted from the CMS', async () => {
    expect((await worker.run('full')).status).toBe('succeeded');
    cms.requests.length = 0;
    const gone = en[20]!;
    cms.store.removeArticle(gone.id);
    // A draft an editor is working on, changed a moment ago, whose url the CMS sends as null.
    const draft = { ...rawArticle({ slug: 'draft-in-progress', status: 'draft', updated_at: '2026-11-01T12:00:00Z' }), url: null };
    cms.store.upsertArticle(draft as unknown as RawArticle);

    const summary = await worker.run('full');

    expect(summary).toMatchObject({ status: 'succeeded', removed: 1, warnings: [] });
    expect(firstPageReads()).toBe(1);
    expect(rereadLogged()).toHaveLength(0);
    expect(snapshotArticles()).not.toHaveProperty(`en/${gone.id}`);
    expect(snapshotArticles()).toEqual(cmsPublished());
  });
});
