import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RawArticle } from '../../../src/demo/cms-store.js';
import { createKey, revokeKey } from '../../../src/keys/manage.js';
import { addKey, keysPathFor, startApi, testClock, withKeys, type TestApi } from '../../support/api.js';
import { corpusSections, generateCorpus } from '../../support/cms-fixtures.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import {
  dumpSnapshot,
  killWorkers,
  query,
  spawnWorker,
  startWorker,
  workerEnv,
  type TestWorker,
} from '../../support/worker.js';

const NOW = '2026-11-01T12:00:00Z';
const clock = testClock(NOW);

let dir: ReturnType<typeof tempDir>;
let dbPath: string;
let cms: TestCms;
let worker: TestWorker;
let api: TestApi;
let key: string;

// The previous snapshot: a small corpus. The CMS then holds about 500 other articles.
const oldEn = generateCorpus({ locale: 'en', count: 30, idPrefix: 'old-en-', seed: 7 });
const oldZh = generateCorpus({ locale: 'zh', count: 10, idPrefix: 'old-zh-', seed: 8 });
const newEn = generateCorpus({ locale: 'en', count: 400, unpublishedRatio: 0.1, seed: 9, startAt: '2026-10-10T00:00:00Z' });
const newZh = generateCorpus({ locale: 'zh', count: 100, unpublishedRatio: 0.1, seed: 10, startAt: '2026-10-10T00:00:00Z' });

/** What the API will expose of a set of CMS records: published, in a section, already out. */
const exposed = (raws: RawArticle[]) =>
  raws.filter((a) => a.status === 'published' && a.section_slug !== null && Date.parse(a.published_at!) <= Date.parse(NOW)).length;

beforeEach(async () => {
  dir = tempDir();
  dbPath = dir.path('snapshot.db');
  cms = await startTestCms();
  for (const locale of ['en', 'zh'] as const) for (const s of corpusSections(locale)) cms.store.upsertSection(locale, s);
  cms.store.upsertArticles([...oldEn, ...oldZh]);
  worker = startWorker({ databasePath: dbPath, cmsUrl: cms.url, clock, pageSize: 50 });
  expect((await worker.run('full')).status).toBe('succeeded');
  key = addKey(dbPath, 'Reader').key;
  api = await startApi({ databasePath: dbPath, clock });
  // The CMS moves on: the old articles are gone, about 500 others are there.
  for (const a of [...oldEn, ...oldZh]) cms.store.removeArticle(a.id);
  cms.store.upsertArticles([...newEn, ...newZh]);
});

afterEach(async () => {
  cms.onPage(undefined);
  await killWorkers();
  await api.close();
  worker.close();
  await cms.close();
  dir.cleanup();
});

async function totals(): Promise<{ en: number; zh: number }> {
  const [en, zh] = await Promise.all(
    (['en', 'zh'] as const).map(async (locale) => {
      const res = await api.request.get('/api/v1/articles').query({ locale, limit: 1 }).set('X-API-Key', key);
      expect(res.status).toBe(200);
      return res.body.meta.total as number;
    }),
  );
  return { en: en!, zh: zh! };
}

const OLD = { en: exposed(oldEn), zh: exposed(oldZh) };
const NEW = { en: exposed(newEn), zh: exposed(newZh) };

describe('readers during a sync', () => {
  it('see the previous snapshot while a full sync of about 500 articles is between pages, the new one after the commit', async () => {
    expect(OLD.en).toBeGreaterThan(0);
    expect(NEW.en).toBeGreaterThan(OLD.en);
    expect(await totals()).toEqual(OLD);
    const seen: Array<{ en: number; zh: number }> = [];
    cms.onPage(async () => {
      seen.push(await totals());
    });

    const summary = await worker.run('full');

    expect(summary).toMatchObject({ status: 'succeeded', removed: 40 });
    const listingPages =
      Math.ceil(newEn.filter((a) => a.status === 'published').length / 50) + Math.ceil(newZh.filter((a) => a.status === 'published').length / 50);
    expect(seen.length).toBeGreaterThanOrEqual(listingPages);
    expect(seen.every((t) => t.en === OLD.en && t.zh === OLD.zh)).toBe(true);
    expect(await totals()).toEqual(NEW);
  });

  it('never see a mix while another process commits a sync: every locale jumps from the old totals to the new in one step', async () => {
    worker.close();
    const child = spawnWorker(['--once', '--full'], workerEnv({ DATABASE_PATH: dbPath, CMS_BASE_URL: cms.url, CMS_PAGE_SIZE: '50', LOG_LEVEL: 'warn' }));
    const samples: Array<{ en: number; zh: number }> = [];
    let exit: { code: number | null } | undefined;
    void child.exited.then((e) => (exit = e));
    while (!exit) samples.push(await totals());
    samples.push(await totals());

    expect(exit.code).toBe(0);
    for (const t of samples) expect([OLD.en, NEW.en]).toContain(t.en);
    for (const t of samples) expect([OLD.zh, NEW.zh]).toContain(t.zh);
    // Once one locale showed the new snapshot, no later answer shows the old one anywhere.
    const firstNew = samples.findIndex((t) => t.en === NEW.en || t.zh === NEW.zh);
    expect(firstNew).toBeGreaterThan(0);
    expect(samples.slice(firstNew + 1).every((t) => t.en === NEW.en && t.zh === NEW.zh)).toBe(true);
    expect(samples.at(-1)).toEqual(NEW);
  });
});

describe('partner keys and the sync', () => {
  it('a full sync leaves the keys database, and the snapshot\'s old api_keys table, exactly as they were', async () => {
    withKeys(dbPath, (db) => revokeKey(db, createKey(db, 'Revoked Partner', clock).id, clock));
    const keysBefore = query(keysPathFor(dbPath), 'SELECT * FROM api_keys ORDER BY id');
    expect(keysBefore).toHaveLength(2);
    const legacyBefore = dumpSnapshot(dbPath).apiKeys;

    expect((await worker.run('full')).status).toBe('succeeded');

    expect(query(keysPathFor(dbPath), 'SELECT * FROM api_keys ORDER BY id')).toEqual(keysBefore);
    expect(dumpSnapshot(dbPath).apiKeys).toEqual(legacyBefore);
  });

  it('a key created and a key revoked while a sync is between pages are both still right after it commits', async () => {
    const other = addKey(dbPath, 'Soon Revoked');
    let created: { id: number; key: string } | undefined;
    cms.onPage((q) => {
      if (created || q.locale !== 'en' || q.page !== 2) return;
      // The editors' CLI, on its own connection, while the worker holds fetched pages.
      withKeys(dbPath, (cli) => {
        created = createKey(cli, 'Mid-sync Partner', clock);
        revokeKey(cli, other.id, clock);
      });
    });

    const summary = await worker.run('full');

    expect(summary.status).toBe('succeeded');
    expect(created).toBeDefined();
    expect(query(keysPathFor(dbPath), 'SELECT partner, revoked_at FROM api_keys ORDER BY id')).toEqual([
      { partner: 'Reader', revoked_at: null },
      { partner: 'Soon Revoked', revoked_at: NOW },
      { partner: 'Mid-sync Partner', revoked_at: null },
    ]);
    const as = (k: string) => api.request.get('/api/v1/articles').set('X-API-Key', k);
    expect((await as(created!.key)).status).toBe(200);
    const refused = await as(other.key);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('revoked_api_key');
    expect((await as(key)).status).toBe(200);
    expect(query(dbPath, `SELECT count(*) AS n FROM articles WHERE cms_id LIKE 'old-%'`)).toEqual([{ n: 0 }]);
  });
});
