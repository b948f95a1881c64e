import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openWriter } from '../../../src/db/sqlite/connection.js';
import { healthSchema } from '../../../src/http/contract/response-schemas.js';
import type { EngineHealth } from '../../../src/search/engine.js';
import { SqliteFtsEngine } from '../../../src/search/sqlite/sqlite-fts.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { deepStrict, isoPlus } from '../../support/contract-helpers.js';

/*
 * /health as an alerting source: `degraded` (still 200) when the snapshot is older than its
 * maximum age, the last sync failed or search is down; 503 only when the store cannot answer.
 */

const NOW = '2026-11-01T12:00:00Z';
const MAX_AGE = 600;
const dir = tempDir();
const dbPath = dir.path('snapshot.db');
const clock = testClock(NOW);
let searchHealth: EngineHealth = { engine: 'sqlite', status: 'ok' };
let api: TestApi;

// The real engine, whose reported state the test can turn down (as Meilisearch going away would).
class SwitchableEngine extends SqliteFtsEngine {
  override health(): Promise<EngineHealth> {
    return Promise.resolve(searchHealth);
  }
}

function runs(...rows: Array<[kind: string, status: string, finishedSecondsAgo: number | null, error: string | null]>): void {
  const db = openWriter(dbPath, { busyTimeoutMs: 5_000 });
  try {
    const insert = db.$client.prepare(
      `INSERT INTO sync_runs (kind, status, started_at, finished_at, pid, host, error) VALUES (?, ?, ?, ?, 1, 'h', ?)`,
    );
    for (const [kind, status, ago, error] of rows) {
      const finished = ago === null ? null : isoPlus(NOW, -ago * 1000);
      insert.run(kind, status, isoPlus(NOW, -((ago ?? 0) + 5) * 1000), finished, error);
    }
  } finally {
    db.$client.close();
  }
}

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber' }), { ...rawSection({ slug: 'fiber' }), locale: 'zh' }],
    articles: [rawArticle({ slug: 'hello', section_slug: 'fiber', published_at: isoPlus(NOW, -3_600_000) })],
    now: Date.parse(isoPlus(NOW, -60_000)),
  });
  // A usable keys database beside it: without one /health is 503 whatever the sync did.
  addKey(dbPath);
  api = await startApi({ databasePath: dbPath, clock, engine: new SwitchableEngine(), deps: { snapshotMaxAgeSeconds: MAX_AGE } });
});

afterAll(async () => {
  await api.close();
  dir.cleanup();
});

beforeEach(() => {
  clock.set(NOW);
  searchHealth = { engine: 'sqlite', status: 'ok' };
  const db = openWriter(dbPath, { busyTimeoutMs: 5_000 });
  db.$client.prepare('DELETE FROM sync_runs').run();
  db.$client.close();
});

async function health() {
  const res = await api.request.get('/health');
  deepStrict(healthSchema).parse(res.body);
  return res;
}

describe('GET /health as an alert source', () => {
  it('is ok with a fresh snapshot and a last sync that succeeded, and shows the last attempt', async () => {
    runs(['full', 'succeeded', 50, null]);
    const res = await health();
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
    expect(res.body.problems).toBeUndefined();
    expect(res.body.snapshot).toMatchObject({ age_seconds: 60, max_age_seconds: MAX_AGE, last_failure: null });
    expect(res.body.snapshot.last_attempt).toEqual({
      kind: 'full',
      status: 'succeeded',
      started_at: isoPlus(NOW, -55_000),
      finished_at: isoPlus(NOW, -50_000),
      error: null,
    });
  });

  it('is degraded (still 200) when the last sync failed, with its time and a reason that names no host or path', async () => {
    runs(['full', 'succeeded', 300, null], ['incremental', 'failed', 20, 'GET https://cms.internal.example/export/articles failed: HTTP 503 (5 attempts)']);
    const res = await health();
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('degraded');
    expect(res.body.problems).toEqual([
      'The last sync (incremental) failed: GET <address> failed: HTTP 503 (5 attempts).',
    ]);
    expect(res.body.snapshot.last_sync).toEqual({ kind: 'full', finished_at: isoPlus(NOW, -300_000), age_seconds: 300 });
    expect(res.body.snapshot.last_failure).toMatchObject({ kind: 'incremental', status: 'failed', finished_at: isoPlus(NOW, -20_000) });
    expect(res.text).not.toContain('cms.internal');
  });

  it('is ok again once a later sync succeeds, and still shows the last failure', async () => {
    runs(['incremental', 'failed', 120, 'CMS answered 502'], ['incremental', 'succeeded', 10, null], ['incremental', 'running', null, null]);
    const res = await health();
    expect(res.body.status).toBe('ok');
    expect(res.body.snapshot.last_attempt).toMatchObject({ kind: 'incremental', status: 'succeeded' });
    expect(res.body.snapshot.last_failure).toMatchObject({ kind: 'incremental', error: 'CMS answered 502' });
  });

  it('is degraded when the snapshot is older than its maximum age, and ok up to it', async () => {
    clock.set(isoPlus(NOW, (MAX_AGE - 60) * 1000));
    expect((await health()).body.status).toBe('ok');
    clock.set(isoPlus(NOW, (MAX_AGE - 60 + 1) * 1000));
    const res = await health();
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('degraded');
    expect(res.body.snapshot.age_seconds).toBe(MAX_AGE + 1);
    expect(res.body.problems).toEqual([`The snapshot is ${MAX_AGE + 1} s old, past SNAPSHOT_MAX_AGE (${MAX_AGE} s).`]);
  });

  it('stays ok when only the search engine is down, which it reports in search.status', async () => {
    searchHealth = { engine: 'meilisearch', status: 'unavailable', detail: 'no answer' };
    const res = await health();
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
    expect(res.body.search).toEqual(searchHealth);
  });

  it('lists every problem at once', async () => {
    runs(['incremental', 'failed', 5, 'timeout']);
    clock.set(isoPlus(NOW, 3_600_000));
    const res = await health();
    expect(res.body.status).toBe('degraded');
    expect(res.body.problems).toHaveLength(2);
  });
});

