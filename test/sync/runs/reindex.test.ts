import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openWriter } from '../../../src/db/sqlite/connection.js';
import { addKey, startApi, testClock } from '../../support/api.js';
import { corpusSections, CORPUS_TERMS, generateCorpus } from '../../support/cms-fixtures.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import { dumpSnapshot, killWorkers, query, runWorker, startWorker, syncRuns, workerEnv, type TestWorker } from '../../support/worker.js';

const NOW = '2026-11-01T12:00:00Z';

let dir: ReturnType<typeof tempDir>;
let dbPath: string;
let cms: TestCms;
let worker: TestWorker;
let key: string;

const QUERIES = [
  ['en', CORPUS_TERMS.en.half],
  ['en', CORPUS_TERMS.en.twentieth],
  ['en', 'fiber source'],
  ['en', 'Jane'],
  ['en', 'ultrafast'],
  ['zh', CORPUS_TERMS.zh.half],
  ['zh', '光纤'],
  ['zh', '栏目'],
] as const;

beforeEach(async () => {
  dir = tempDir();
  dbPath = dir.path('snapshot.db');
  cms = await startTestCms();
  for (const locale of ['en', 'zh'] as const) for (const s of corpusSections(locale)) cms.store.upsertSection(locale, s);
  cms.store.upsertArticles([...generateCorpus({ locale: 'en', count: 120, seed: 3 }), ...generateCorpus({ locale: 'zh', count: 60, seed: 4 })]);
  worker = startWorker({ databasePath: dbPath, cmsUrl: cms.url, clock: testClock(NOW), pageSize: 50 });
  expect((await worker.run('full')).status).toBe('succeeded');
  key = addKey(dbPath).key;
  cms.requests.length = 0;
});

afterEach(async () => {
  await killWorkers();
  worker.close();
  await cms.close();
  dir.cleanup();
});

/** Every query's total and first 50 slugs, from a fresh API (no response or ranking cache). */
async function searchResults(): Promise<Array<{ q: string; total: number; slugs: string[] }>> {
  const api = await startApi({ databasePath: dbPath, clock: testClock(NOW) });
  try {
    const out = [];
    for (const [locale, q] of QUERIES) {
      const res = await api.request.get('/api/v1/search').query({ q, locale, limit: 50 }).set('X-API-Key', key);
      expect(res.status).toBe(200);
      out.push({ q, total: res.body.meta.total as number, slugs: res.body.data.map((a: { slug: string }) => a.slug) as string[] });
    }
    return out;
  } finally {
    await api.close();
  }
}

function emptyIndexByHand(): void {
  const db = openWriter(dbPath, { busyTimeoutMs: 5_000 });
  try {
    db.$client.exec(`INSERT INTO articles_fts (articles_fts) VALUES ('delete-all')`);
  } finally {
    db.$client.close();
  }
}

const ftsCount = () => query<{ n: number }>(dbPath, 'SELECT count(*) AS n FROM articles_fts')[0]!.n;

describe('reindex', () => {
  it('rebuilds the index in-process without a CMS: same results and index rows, content untouched, a new content version', async () => {
    const before = await searchResults();
    expect(before.every((r) => r.total > 0)).toBe(true);
    const dumpBefore = dumpSnapshot(dbPath);
    // An hour after the sync: the reindex's own time.
    const noCms = startWorker({ databasePath: dbPath, clock: testClock('2026-11-01T13:00:00Z') });
    try {
      const summary = await noCms.run('reindex');
      expect(summary).toMatchObject({ kind: 'reindex', status: 'succeeded', error: null });
    } finally {
      noCms.close();
    }

    expect(await searchResults()).toEqual(before);
    const dumpAfter = dumpSnapshot(dbPath);
    const { fts: ftsAfter, snapshotState: stateAfter, ...contentAfter } = dumpAfter;
    const { fts: ftsBefore, snapshotState: stateBefore, ...contentBefore } = dumpBefore;
    expect(contentAfter).toEqual(contentBefore);
    expect(ftsAfter.rowids).toEqual(ftsBefore.rowids);
    // A new index is a new content version (readers' caches follow) and moves Last-Modified
    // (search results may differ); the sync time stays, the CMS was not read.
    expect(stateAfter).toEqual(
      (stateBefore as Array<{ version: number }>).map((s) => ({ ...s, version: s.version + 1, changed_at: '2026-11-01T13:00:00Z' })),
    );
    expect(cms.requests).toEqual([]);
  });

  it('--reindex without CMS_BASE_URL restores an index emptied by hand to the same results', async () => {
    const before = await searchResults();
    emptyIndexByHand();
    expect(ftsCount()).toBe(0);
    expect((await searchResults()).every((r) => r.total === 0)).toBe(true);
    worker.close();

    const result = await runWorker(['--reindex'], workerEnv({ DATABASE_PATH: dbPath, LOG_LEVEL: 'info' }));

    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('embedded search index rebuilt');
    expect(ftsCount()).toBe(query<{ n: number }>(dbPath, 'SELECT count(*) AS n FROM articles')[0]!.n);
    expect(await searchResults()).toEqual(before);
    expect(syncRuns(dbPath).at(-1)).toMatchObject({ kind: 'reindex', status: 'succeeded', error: null });
  });

  it('--reindex with a CMS configured still never calls it', async () => {
    const before = await searchResults();
    emptyIndexByHand();
    worker.close();

    const result = await runWorker(['--reindex'], workerEnv({ DATABASE_PATH: dbPath, CMS_BASE_URL: cms.url, LOG_LEVEL: 'warn' }));

    expect(result.code).toBe(0);
    expect(cms.requests).toEqual([]);
    expect(await searchResults()).toEqual(before);
  });

  it('repairs search for an API that is already running: it serves the rebuilt index right after the reindex', async () => {
    const healthy = (await searchResults()).find((r) => r.q === CORPUS_TERMS.en.half)!;
    expect(healthy.total).toBeGreaterThan(0);
    const api = await startApi({ databasePath: dbPath, clock: testClock(NOW) });
    try {
      const search = async () => {
        const res = await api.request.get('/api/v1/search').query({ q: healthy.q, locale: 'en', limit: 50 }).set('X-API-Key', key);
        return { q: healthy.q, total: res.body.meta.total as number, slugs: res.body.data.map((a: { slug: string }) => a.slug) as string[] };
      };
      expect((await api.request.get('/api/v1/articles').set('X-API-Key', key)).status).toBe(200);
      emptyIndexByHand();
      // A partner searches while the index is broken.
      expect((await search()).total).toBe(0);

      const repair = startWorker({ databasePath: dbPath, clock: testClock(NOW) });
      try {
        expect((await repair.run('reindex')).status).toBe('succeeded');
      } finally {
        repair.close();
      }

      expect(await search()).toEqual(healthy);
    } finally {
      await api.close();
    }
  });

  it('does not count as a CMS sync: the next incremental asks for changes since the last CMS sync', async () => {
    const clock = testClock('2026-11-01T13:00:00Z');
    const later = startWorker({ databasePath: dbPath, cmsUrl: cms.url, clock });
    try {
      expect((await later.run('reindex')).status).toBe('succeeded');
      clock.set('2026-11-01T14:00:00Z');
      expect(await later.run('auto')).toMatchObject({ kind: 'incremental', status: 'succeeded' });
    } finally {
      later.close();
    }
    const since = cms.requests.filter((r) => r.path.startsWith('/articles')).map((r) => new URL(r.path, 'http://x').searchParams.get('updated_since'));
    expect(since).toEqual(['2026-11-01T11:59:00Z', '2026-11-01T11:59:00Z']);
  });
});
