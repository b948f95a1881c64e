import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWriter } from '../../../src/db/sqlite/connection.js';
import { healthSchema } from '../../../src/http/contract/response-schemas.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir, writeSnapshot, type SnapshotContent } from '../../support/snapshot-fixture.js';
import { deepStrict, isoPlus } from '../../support/contract-helpers.js';

const NOW = '2026-11-01T12:00:00Z';
const FIRST_SYNC = isoPlus(NOW, -90_000);
const SECOND_SYNC = isoPlus(NOW, -30_000);
const dir = tempDir();
const dbPath = dir.path('snapshot.db');
const clock = testClock(NOW);
let api: TestApi;
let key: string;

const CONTENT: SnapshotContent = {
  sections: [
    rawSection({ slug: 'fiber', name: 'Fiber' }),
    { ...rawSection({ slug: 'fiber', name: '光纤' }), locale: 'zh' },
  ],
  articles: [
    rawArticle({ slug: 'hello', section_slug: 'fiber', published_at: isoPlus(NOW, -3_600_000) }),
    rawArticle({ locale: 'zh', slug: 'ni-hao', section_slug: 'fiber', published_at: isoPlus(NOW, -3_600_000) }),
  ],
};

beforeAll(async () => {
  buildSnapshot(dbPath, { ...CONTENT, now: Date.parse(FIRST_SYNC) });
  key = addKey(dbPath).key;
  api = await startApi({ databasePath: dbPath, clock });
});

afterAll(async () => {
  await api.close();
  dir.cleanup();
});

function withWriter(fn: (db: ReturnType<typeof openWriter>) => void): void {
  const db = openWriter(dbPath, { busyTimeoutMs: 5_000 });
  try {
    fn(db);
  } finally {
    db.$client.close();
  }
}

describe('GET /health', () => {
  it('answers 200 with snapshot ages per locale and the search engine state, no key needed', async () => {
    const res = await api.request.get('/health');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    deepStrict(healthSchema).parse(res.body);
    expect(res.body).toEqual({
      status: 'ok',
      snapshot: {
        locales: {
          en: { synced_at: FIRST_SYNC, age_seconds: 90, changed_at: FIRST_SYNC },
          zh: { synced_at: FIRST_SYNC, age_seconds: 90, changed_at: FIRST_SYNC },
        },
        age_seconds: 90,
        max_age_seconds: 1800,
        last_sync: null,
        last_attempt: null,
        last_failure: null,
      },
      search: { engine: 'sqlite', status: 'ok' },
      // Two exposed articles in the fixture, no takedown yet.
      feed: { entries: expect.any(Number), oldest_delete_at: null },
    });
    expect(res.body.feed.entries).toBeGreaterThan(0);
  });

  it('ignores any key header: a bad or revoked key does not matter here', async () => {
    for (const value of ['garbage', `lsk_${'x'.repeat(32)}`, key]) {
      const res = await api.request.get('/health').set('X-API-Key', value);
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('ok');
    }
  });

  it('computes ages from the clock at each request', async () => {
    clock.advance(60_000);
    try {
      const res = await api.request.get('/health');
      expect(res.body.snapshot.locales.en.age_seconds).toBe(150);
    } finally {
      clock.set(NOW);
    }
  });

  it('moves synced_at with every sync but changed_at only when content changed', async () => {
    withWriter((db) => writeSnapshot(db, { ...CONTENT, now: Date.parse(SECOND_SYNC) }));
    const res = await api.request.get('/health');
    expect(res.body.snapshot.locales.en).toEqual({ synced_at: SECOND_SYNC, age_seconds: 30, changed_at: FIRST_SYNC });
    expect(res.body.snapshot.locales.zh).toEqual({ synced_at: SECOND_SYNC, age_seconds: 30, changed_at: FIRST_SYNC });
  });

  it('reports the last successful sync from the CMS, skipping failed and running runs and reindexes', async () => {
    const finished = isoPlus(NOW, -45_000);
    withWriter((db) => {
      const insert = db.$client.prepare(
        `INSERT INTO sync_runs (kind, status, started_at, finished_at, pid, host, error) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      );
      insert.run('full', 'succeeded', isoPlus(NOW, -60_000), finished, 4242, 'worker-host', null);
      insert.run('incremental', 'failed', isoPlus(NOW, -20_000), isoPlus(NOW, -10_000), 4242, 'worker-host', 'CMS answered 502 at /secret/path');
      insert.run('incremental', 'running', isoPlus(NOW, -5_000), null, 4242, 'worker-host', null);
      // A reindex rebuilds the search index from the snapshot: the content is no fresher.
      insert.run('reindex', 'succeeded', isoPlus(NOW, -3_000), isoPlus(NOW, -2_000), 4242, 'worker-host', null);
    });
    const res = await api.request.get('/health');
    expect(res.status).toBe(200);
    deepStrict(healthSchema).parse(res.body);
    expect(res.body.snapshot.last_sync).toEqual({ kind: 'full', finished_at: finished, age_seconds: 45 });
    // The reindex that succeeded since does not hide the failed sync from alerting.
    expect(res.body.status).toBe('degraded');
    expect(res.body.snapshot.last_attempt).toMatchObject({ kind: 'incremental', status: 'failed' });
    expect(res.body.problems).toEqual([expect.stringMatching(/^The last sync \(incremental\) failed: /)]);
  });

  it('reveals nothing secret: no key, hash, host, path or error text', async () => {
    const res = await api.request.get('/health');
    for (const secret of [key, key.slice(4), dir.dir, 'snapshot.db', 'worker-host', '4242', '/secret/path', 'api_keys']) {
      expect(res.text).not.toContain(secret);
    }
  });

  it('answers HEAD with the same headers and no body', async () => {
    const got = await api.request.get('/health');
    const head = await api.request.head('/health');
    expect(head.status).toBe(200);
    expect(head.headers['cache-control']).toBe('no-store');
    expect(head.headers['content-type']).toBe(got.headers['content-type']);
    expect(head.headers['content-length']).toBe(got.headers['content-length']);
    expect(head.text ?? '').toBe('');
  });
});
