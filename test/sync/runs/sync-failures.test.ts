import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ArticlesPageQuery } from '../../../src/demo/cms-server.js';
import type { RawArticle } from '../../../src/demo/cms-store.js';
import type { SyncSummary } from '../../../sync/run-sync.js';
import { addKey, testClock } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import { dumpSnapshot, parsedLogs, query, startWorker, syncRuns, type SnapshotDump, type TestWorker } from '../../support/worker.js';

const T0 = '2026-11-01T12:00:00Z';
const T1 = '2026-11-01T12:10:00Z';
const RETRY_BUDGET_MS = 2_000;

let dir: ReturnType<typeof tempDir>;
let dbPath: string;
let cms: TestCms;
let worker: TestWorker;
let clock: ReturnType<typeof testClock>;
let waits: number[];
let others: TestCms[] = [];

// 45 en articles: five pages of 10 (the last one has 5); 8 zh articles: one page.
const section = rawSection({ slug: 'news', name: 'News' });
const zhSection = rawSection({ slug: 'news', name: '新闻' });
const en = Array.from({ length: 45 }, (_, i) => rawArticle({ slug: `story-${i}`, section_slug: 'news' }));
const zh = Array.from({ length: 8 }, (_, i) => rawArticle({ locale: 'zh', slug: `zh-story-${i}`, section_slug: 'news' }));

beforeEach(async () => {
  dir = tempDir();
  dbPath = dir.path('snapshot.db');
  cms = await startTestCms();
  cms.store.upsertSection('en', section);
  cms.store.upsertSection('zh', zhSection);
  cms.store.upsertArticles([...en, ...zh]);
  clock = testClock(T0);
  waits = [];
  worker = startWorker({
    databasePath: dbPath,
    cmsUrl: cms.url,
    clock,
    maxAttempts: 3,
    retryBudgetMs: RETRY_BUDGET_MS,
    // Waits between attempts are recorded, not slept: the attempts are what is measured.
    sleep: async (ms) => {
      waits.push(ms);
    },
  });
  const baseline = await worker.run('full');
  expect(baseline).toMatchObject({ status: 'succeeded', upserted: 53 });
  addKey(dbPath, 'Partner Before');
  clock.set(T1);
  cms.requests.length = 0;
});

afterEach(async () => {
  cms.onPage(undefined);
  worker.close();
  await Promise.all([cms.close(), ...others.map((o) => o.close())]);
  others = [];
  dir.cleanup();
});

const newer = (raw: RawArticle, changes: Partial<RawArticle> = {}): RawArticle => ({ ...raw, updated_at: '2026-11-01T12:05:00Z', ...changes });
const requested = (pathPrefix: string) => cms.requests.filter((r) => r.path.startsWith(pathPrefix)).length;

/** Runs `fn` once, just before the CMS serves the given articles page. */
function beforePage(locale: string, page: number, fn: (query: ArticlesPageQuery) => void): void {
  let done = false;
  cms.onPage((query) => {
    if (done || query.locale !== locale || query.page !== page) return;
    done = true;
    fn(query);
  });
}

/** The run failed, said why in one line, recorded it, and the snapshot is exactly as before. */
function expectFailedAndUnchanged(summary: SyncSummary, before: SnapshotDump, error: RegExp): void {
  expect(summary.status).toBe('failed');
  expect(summary.error).toMatch(error);
  expect(summary.error).not.toContain('\n');
  const run = syncRuns(dbPath).at(-1)!;
  expect(run).toMatchObject({ id: summary.runId, status: 'failed', error: summary.error, finished_at: T1 });
  expect(dumpSnapshot(dbPath)).toEqual(before);
}

describe('a failing CMS leaves the snapshot exactly as it was', () => {
  let before: SnapshotDump;

  // Changes a successful run would apply: an edit, a deletion, two new articles, an unpublication.
  beforeEach(() => {
    cms.store.upsertArticle(newer(en[0]!, { title: 'Edited headline' }));
    cms.store.removeArticle(en[1]!.id);
    cms.store.upsertArticles([
      rawArticle({ slug: 'new-1', section_slug: 'news', updated_at: '2026-11-01T12:06:00Z' }),
      rawArticle({ slug: 'new-2', section_slug: 'news', updated_at: '2026-11-01T12:07:00Z' }),
    ]);
    cms.store.upsertArticle(newer(zh[0]!, { status: 'archived' }));
    before = dumpSnapshot(dbPath);
  });

  it('fails fast when the CMS is down: maxAttempts connection attempts, short waits, nothing reached', async () => {
    await cms.setDown(true);

    const summary = await worker.run('full');

    expectFailedAndUnchanged(summary, before, /^CMS unreachable: GET \/sections\?locale=en: connection refused \(3 attempts\)$/);
    expect(cms.requests).toEqual([]);
    expect(waits).toHaveLength(2);
    expect(waits.reduce((a, b) => a + b, 0)).toBeLessThan(RETRY_BUDGET_MS / 100);
    const retries = parsedLogs(worker.logs).filter((l) => l.msg === 'CMS request failed; retrying');
    expect(retries.map((l) => l.attempt)).toEqual([1, 2]);
  });

  it('fails after maxAttempts when every attempt is a 5xx', async () => {
    cms.failNext(3, { status: 502 });

    const summary = await worker.run('full');

    expectFailedAndUnchanged(summary, before, /^CMS error response: GET \/sections\?locale=en: HTTP 502 .*injected 502 \(3 attempts\)$/);
    expect(cms.requests.map((r) => r.path)).toEqual(['/sections?locale=en', '/sections?locale=en', '/sections?locale=en']);
  });

  it('honours Retry-After of a 429 and succeeds after it when it fits the retry budget', async () => {
    cms.failNext(1, { status: 429, retryAfter: 1 });

    const summary = await worker.run('full');

    expect(summary).toMatchObject({ status: 'succeeded', error: null, upserted: 3, removed: 2 });
    expect(waits).toEqual([1_000]);
    expect(requested('/sections?locale=en')).toBe(2);
    expect(query(dbPath, 'SELECT title FROM articles WHERE cms_id = ?', en[0]!.id)).toEqual([{ title: 'Edited headline' }]);
  });

  it('gives up at once on a 429 whose Retry-After exceeds the retry budget', async () => {
    cms.failNext(1, { status: 429, retryAfter: 30 });

    const summary = await worker.run('full');

    expectFailedAndUnchanged(summary, before, /^CMS error response: GET \/sections\?locale=en: HTTP 429 /);
    expect(waits).toEqual([]);
    expect(requested('/sections')).toBe(1);
  });

  it('applies nothing when a full sync fails at page 3 of 5: nothing removed, nothing added', async () => {
    beforePage('en', 2, () => cms.failNext(3, { status: 500 }));

    const summary = await worker.run('full');

    expectFailedAndUnchanged(
      summary,
      before,
      /^CMS error response: GET \/articles\?locale=en&page=3&per_page=10&status=published: HTTP 500 .*\(3 attempts\)$/,
    );
    expect(requested('/articles?locale=en&page=3&')).toBe(3);
    expect(requested('/articles?locale=en&page=4&')).toBe(0);
    const slugs = query<{ slug: string }>(dbPath, `SELECT slug FROM articles WHERE slug IN ('story-1', 'new-1', 'new-2')`);
    expect(slugs).toEqual([{ slug: 'story-1' }]);
  });

  it('applies nothing of a locale already read when the next locale fails (all locales or none)', async () => {
    // en is read whole before zh starts; the request after zh's first page fails.
    beforePage('zh', 1, () => cms.failNext(3, { status: 503 }));

    const summary = await worker.run('full');

    expectFailedAndUnchanged(summary, before, /^CMS error response: GET \/articles\?locale=zh&.*HTTP 503 .*\(3 attempts\)$/);
    expect(requested('/articles?locale=en&page=5&')).toBe(1);
  });

  it('fails on a page of invalid JSON in the middle of a full sync', async () => {
    beforePage('en', 2, () => cms.invalidJsonNext(3));

    const summary = await worker.run('full');

    expectFailedAndUnchanged(
      summary,
      before,
      /^CMS sent invalid JSON: GET \/articles\?locale=en&page=3&per_page=10&status=published: body is not JSON \(starts with "<html>.*\(3 attempts\)$/,
    );
  });

  it('retries a page that was invalid JSON once, and succeeds', async () => {
    beforePage('en', 2, () => cms.invalidJsonNext(1));

    const summary = await worker.run('full');

    expect(summary).toMatchObject({ status: 'succeeded', upserted: 3, removed: 2 });
    expect(requested('/articles?locale=en&page=3&')).toBe(2);
  });

  it('fails on a body cut off mid-way', async () => {
    beforePage('en', 3, () => cms.cutOffNext(3));

    const summary = await worker.run('full');

    expectFailedAndUnchanged(summary, before, /^CMS sent invalid JSON: GET \/articles\?locale=en&page=4&.*: body cut off after \d+ of \d+ bytes/);
  });

  it('refuses a response larger than the bound (declared length), without retrying', async () => {
    beforePage('en', 2, () => cms.hugeNext(2 << 20));

    const summary = await worker.run('full');

    expectFailedAndUnchanged(summary, before, /^CMS response too large: GET \/articles\?locale=en&page=3&.*: Content-Length \d+ exceeds the 1048576-byte bound$/);
    expect(requested('/articles?locale=en&page=3&')).toBe(1);
  });

  it('refuses a streamed response that grows past the bound, without retrying', async () => {
    beforePage('en', 2, () => cms.hugeNext(2 << 20, { chunked: true }));

    const summary = await worker.run('full');

    expectFailedAndUnchanged(summary, before, /^CMS response too large: GET \/articles\?locale=en&page=3&.*: body exceeds the 1048576-byte bound$/);
    expect(requested('/articles?locale=en&page=3&')).toBe(1);
  });

  it('refuses a redirect to another host, which never hears from the worker', async () => {
    const elsewhere = await startTestCms();
    others.push(elsewhere);
    elsewhere.store.upsertSection('en', section);
    beforePage('en', 2, (q) => cms.redirectNext(1, `${elsewhere.url}/articles?locale=en&page=${q.page + 1}&per_page=10&status=published`));

    const summary = await worker.run('full');

    expectFailedAndUnchanged(summary, before, /^CMS redirect refused: GET \/articles\?locale=en&page=3&.*: HTTP 302 to another origin \(http:\/\/127\.0\.0\.1:\d+\)$/);
    expect(elsewhere.requests).toEqual([]);
    expect(requested('/articles?locale=en&page=3&')).toBe(1);
  });

  it('fails on a page of the wrong shape without retrying', async () => {
    beforePage('en', 2, () => cms.failNext(1, { status: 200, body: '{"data":"not a list"}' }));

    const summary = await worker.run('full');

    expectFailedAndUnchanged(summary, before, /^CMS sent an unexpected response: GET \/articles\?locale=en&page=3&.*: data: expected array/);
  });

  it('leaves the snapshot as before when an incremental sync fails half-way', async () => {
    let served = 0;
    cms.onPage(() => {
      served += 1;
      if (served === 1) cms.failNext(3, { status: 500 });
    });

    const summary = await worker.run('incremental');

    expectFailedAndUnchanged(summary, before, /^CMS error response: GET \/sections\?locale=zh: HTTP 500/);
  });
});

describe('a bad record', () => {
  const bad = en[20]!;
  const good = en[30]!;

  // Every time the record is served, as a record that stays broken is: a full sync also sees
  // it among the changes, and must not take it for a fix it missed.
  function rejectWhenServed(cmsId: string, patch: Record<string, unknown>): void {
    cms.onPage((q) => {
      const page = cms.store.queryArticles({
        locale: q.locale,
        page: q.page,
        perPage: q.perPage,
        publishedOnly: q.status === 'published',
        ...(q.updatedSince === undefined ? {} : { updatedSinceMs: Date.parse(q.updatedSince) }),
      });
      const index = page.data.findIndex((a) => a.id === cmsId);
      if (index < 0) return;
      cms.badRecordNext(patch, index);
    });
  }

  const storedRow = (cmsId: string) => query(dbPath, 'SELECT * FROM articles WHERE cms_id = ?', cmsId)[0];

  for (const kind of ['full', 'incremental'] as const) {
    it(`is skipped, logged with its CMS id and reason, counted as rejected, and its stored version stays (${kind} sync)`, async () => {
      const storedBefore = storedRow(bad.id);
      cms.store.upsertArticle(newer(bad, { title: 'An edit that arrives broken' }));
      cms.store.upsertArticle(newer(good, { title: 'A good edit', updated_at: '2026-11-01T12:06:00Z' }));
      rejectWhenServed(bad.id, { title: 42 });

      const summary = await worker.run(kind);

      expect(summary).toMatchObject({ kind, status: 'succeeded', error: null, rejected: 1, upserted: 1, removed: 0 });
      expect(storedRow(bad.id)).toEqual(storedBefore);
      expect(query(dbPath, 'SELECT title FROM articles WHERE cms_id = ?', good.id)).toEqual([{ title: 'A good edit' }]);
      const rejection = parsedLogs(worker.logs).find((l) => l.cmsId === bad.id);
      expect(rejection).toMatchObject({ level: 40, locale: 'en', reason: 'title: expected string, got number' });
      expect(rejection?.msg).toBe(`rejected CMS record ${bad.id}: title: expected string, got number`);
      expect(syncRuns(dbPath).at(-1)).toMatchObject({ kind, status: 'succeeded', rejected: 1, upserted: 1, error: null });
    });
  }

  it('without a readable id makes a full sync remove nothing, with a warning, while other changes apply', async () => {
    const deleted = en[5]!;
    cms.store.removeArticle(deleted.id);
    cms.store.upsertArticle(newer(good, { title: 'A good edit' }));
    rejectWhenServed(en[40]!.id, { id: undefined });

    const summary = await worker.run('full');

    expect(summary).toMatchObject({ status: 'succeeded', rejected: 1, upserted: 1, removed: 0 });
    expect(summary.warnings).toEqual(['en: a record without a readable id was rejected; nothing was removed this run']);
    expect(query(dbPath, 'SELECT slug FROM articles WHERE cms_id = ?', deleted.id)).toEqual([{ slug: deleted.slug }]);
    expect(query(dbPath, 'SELECT title FROM articles WHERE cms_id = ?', good.id)).toEqual([{ title: 'A good edit' }]);
    expect(parsedLogs(worker.logs).some((l) => l.msg === 'rejected CMS record (unreadable id): id: missing')).toBe(true);
  });
});
