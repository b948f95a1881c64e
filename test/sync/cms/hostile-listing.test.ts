import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ArticlesBody } from '../../../src/demo/cms-server.js';
import { testClock } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import { query, startWorker, type TestWorker } from '../../support/worker.js';

/*
 * A CMS that claims a billion pages and answers every page with the first one's records would
 * keep a listing (and so every later sync and takedown) going for ever. The worker stops
 * reading at the first page with nothing new, and treats the listing as unsettled.
 */

let dir: ReturnType<typeof tempDir>;
let cms: TestCms;
let worker: TestWorker;
const stories = Array.from({ length: 12 }, (_, i) => rawArticle({ slug: `story-${i}`, section_slug: 'news' }));

beforeEach(async () => {
  dir = tempDir('hostile-listing-');
  cms = await startTestCms();
  cms.store.upsertSection('en', rawSection({ slug: 'news' }));
  cms.store.upsertSection('zh', rawSection({ slug: 'news' }));
  cms.store.upsertArticles(stories);
  worker = startWorker({ databasePath: dir.path('snapshot.db'), cmsUrl: cms.url, clock: testClock('2026-11-01T12:00:00Z'), pageSize: 10 });
});

afterEach(async () => {
  cms.rewritePages(undefined);
  worker.close();
  await cms.close();
  dir.cleanup();
});

describe('a CMS that repeats its first page under a billion page numbers', () => {
  it('ends the sync in a few requests, stores what it read, and removes nothing', async () => {
    await worker.run('full');
    let first: ArticlesBody['data'] | undefined;
    cms.rewritePages((body, page) => {
      if (page.page === 1) first = body.data;
      return { data: first ?? body.data, meta: { ...body.meta, total: 10 * 1_000_000_000, pages: 1_000_000_000 } };
    });
    const before = cms.requests.length;
    // Deleted in the CMS: a listing that settled would remove it.
    cms.store.removeArticle(stories[11]!.id);
    const summary = await worker.run('full');
    expect(summary.status).toBe('succeeded');
    expect(summary.warnings.join(' ')).toMatch(/kept changing/);
    // Three reads of two pages per locale, and the checks: nowhere near a billion.
    expect(cms.requests.length - before).toBeLessThan(40);
    // An unsettled full listing proves nothing gone: every article stays.
    expect(query(dir.path('snapshot.db'), `SELECT count(*) AS n FROM articles WHERE locale = 'en'`)).toEqual([{ n: 12 }]);
  });
});
