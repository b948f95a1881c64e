import { request as httpRequest } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addKey } from '../support/api.js';
import { killApis, spawnApi, type ApiProcess } from '../support/api-process.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { scrape } from '../support/prometheus.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { killWorkers, runWorker, workerEnv } from '../support/worker.js';
import { startTestCms, type TestCms } from '../fakes/test-cms.js';

/*
 * The change feed's `wait`, against the real API process: answered within a second of a sync
 * committed by another process (the worker, --once) or of a scheduled article's time, at once
 * when changes are there, after N seconds otherwise; two per key; answered on SIGTERM; and
 * never keeping a new client out at the connection cap.
 */

const dir = tempDir();
let cms: TestCms;

beforeAll(async () => {
  cms = await startTestCms();
  cms.store.upsertSection('en', rawSection({ slug: 'fiber' }));
  cms.store.upsertArticle(rawArticle({ slug: 'first', section_slug: 'fiber', published_at: '2026-01-01T00:00:00Z' }));
});
afterEach(async () => {
  await killApis();
  await killWorkers();
});
afterAll(async () => {
  await cms.close();
  dir.cleanup();
});

interface Page {
  data: { type: string; slug: string }[];
  meta: { next: string; has_more: boolean };
}

/** One request on its own connection; resolves with the answer and when it arrived. */
function get(api: ApiProcess, path: string, key: string): Promise<{ status: number; body: Page & { error?: { code: string } }; at: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${api.url}${path}`, { headers: { 'X-API-Key': key }, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), at: Date.now(), connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function sync(snapshot: string): Promise<number> {
  const worker = await runWorker(['--once'], workerEnv({ DATABASE_PATH: snapshot, CMS_BASE_URL: cms.url, LOG_LEVEL: 'warn' }), 60_000);
  expect(worker.code, worker.stderr).toBe(0);
  return Date.now();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('wait on the change feed', () => {
  const snapshot = dir.path('snapshot.db');
  let key: string;
  let other: string;
  beforeAll(async () => {
    await sync(snapshot);
    key = addKey(snapshot, 'Waiting Partner').key;
    other = addKey(snapshot, 'Other Partner').key;
  }, 90_000);

  it('answers within one second of a sync committed by another process', async () => {
    const api = await spawnApi({ DATABASE_PATH: snapshot, METRICS_PORT: '0' });
    const head = (await get(api, '/api/v1/changes', key)).body.meta.next;
    const waiting = get(api, `/api/v1/changes?since=${head}&wait=30`, key);
    await sleep(500);
    // Updated now, so the worker's incremental sync picks it up.
    const now = new Date().toISOString().replace(/\.\d{3}/, '');
    cms.store.upsertArticle(rawArticle({ slug: 'second', section_slug: 'fiber', published_at: '2026-01-02T00:00:00Z', updated_at: now }));
    const synced = await sync(snapshot);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body.data.map((c) => c.slug)).toEqual(['second']);
    // The worker's exit follows its commit: the answer left less than a second after it.
    expect(answer.at - synced).toBeLessThan(1_000);
    const m = await scrape(api.metricsUrl!);
    expect(m.value('syndication_feed_waits_ended_total', { reason: 'change' })).toBe(1);
    expect(m.value('syndication_feed_waiting_requests')).toBe(0);
  }, 90_000);

  it('answers at once when changes are there, and with the empty page and the same next after N seconds otherwise', async () => {
    const api = await spawnApi({ DATABASE_PATH: snapshot });
    const started = Date.now();
    const full = await get(api, '/api/v1/changes?wait=30', key);
    expect(full.body.data.length).toBeGreaterThan(0);
    expect(full.at - started).toBeLessThan(1_000);
    const head = full.body.meta.next;
    const before = Date.now();
    const empty = await get(api, `/api/v1/changes?since=${head}&wait=2`, key);
    expect(empty.status).toBe(200);
    expect(empty.body.data).toEqual([]);
    expect(empty.body.meta.next).toBe(head);
    expect(empty.at - before).toBeGreaterThanOrEqual(1_950);
    expect(empty.at - before).toBeLessThan(3_000);
  }, 60_000);

  it('is not cut by the server idle timeout (HTTP_REQUEST_TIMEOUT_MS) while it waits', async () => {
    const api = await spawnApi({ DATABASE_PATH: snapshot, HTTP_REQUEST_TIMEOUT_MS: '1000', HTTP_HEADERS_TIMEOUT_MS: '1000' });
    const head = (await get(api, '/api/v1/changes', key)).body.meta.next;
    const before = Date.now();
    const answer = await get(api, `/api/v1/changes?since=${head}&wait=3`, key);
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual([]);
    expect(answer.at - before).toBeGreaterThanOrEqual(2_950);
  }, 60_000);

  it('refuses a wait outside 0 to 60 seconds with a 400', async () => {
    const api = await spawnApi({ DATABASE_PATH: snapshot });
    for (const wait of ['61', '-1', '1.5', 'soon']) {
      const answer = await get(api, `/api/v1/changes?wait=${wait}`, key);
      expect(answer.status).toBe(400);
      expect(answer.body.error?.code).toBe('invalid_parameter');
    }
  }, 60_000);

  it('holds two per key, answers a third at once, and answers the waiting ones on SIGTERM, exit 0', async () => {
    const api = await spawnApi({ DATABASE_PATH: snapshot, METRICS_PORT: '0' });
    const head = (await get(api, '/api/v1/changes', key)).body.meta.next;
    const path = `/api/v1/changes?since=${head}&wait=60`;
    const first = get(api, path, key);
    const second = get(api, path, key);
    const otherKey = get(api, path, other);
    await sleep(500);
    const before = Date.now();
    const third = await get(api, path, key);
    expect(third.body.data).toEqual([]);
    expect(third.at - before).toBeLessThan(500);
    const m = await scrape(api.metricsUrl!);
    expect(m.value('syndication_feed_waiting_requests')).toBe(3);

    const stopping = Date.now();
    api.child.kill('SIGTERM');
    const answers = await Promise.all([first, second, otherKey]);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body.data).toEqual([]);
      expect(answer.body.meta.next).toBe(head);
      expect(answer.connection).toBe('close');
      expect(answer.at - stopping).toBeLessThan(1_000);
    }
    expect((await api.exited).code).toBe(0);
  }, 60_000);

  it('at the connection cap, a new client is admitted and a waiting request answered', async () => {
    const api = await spawnApi({ DATABASE_PATH: snapshot, HTTP_MAX_CONNECTIONS: '2' });
    const head = (await get(api, '/api/v1/changes', key)).body.meta.next;
    await sleep(200);
    const path = `/api/v1/changes?since=${head}&wait=60`;
    const started = Date.now();
    const waiters = [get(api, path, key), get(api, path, other)];
    await sleep(500);
    const newcomer = await get(api, '/api/v1/categories', key);
    expect(newcomer.status).toBe(200);
    const released = await Promise.race(waiters);
    expect(released.status).toBe(200);
    expect(released.body.data).toEqual([]);
    expect(released.connection).toBe('close');
    expect(released.at - started).toBeLessThan(5_000);
  }, 60_000);
});

describe('a scheduled article', () => {
  const snapshot = dir.path('scheduled.db');
  it('wakes a waiting request within one second of its publication time', async () => {
    await sync(snapshot);
    const { key } = addKey(snapshot, 'Scheduled Partner');
    const api = await spawnApi({ DATABASE_PATH: snapshot });
    // Scheduled once the API runs, far enough ahead for a sync on a loaded machine.
    const publishAt = Math.ceil((Date.now() + 15_000) / 1000) * 1000;
    const now = new Date().toISOString().replace(/\.\d{3}/, '');
    cms.store.upsertArticle(
      rawArticle({ slug: 'scheduled', section_slug: 'fiber', updated_at: now, published_at: new Date(publishAt).toISOString().replace('.000', '') }),
    );
    await sync(snapshot);
    const head = (await get(api, '/api/v1/changes', key)).body;
    expect(head.data.map((c) => c.slug)).not.toContain('scheduled');
    expect(Date.now()).toBeLessThan(publishAt - 1_000);
    const answer = await get(api, `/api/v1/changes?since=${head.meta.next}&wait=60`, key);
    expect(answer.body.data.map((c) => c.slug)).toEqual(['scheduled']);
    expect(answer.at).toBeGreaterThanOrEqual(publishAt);
    expect(answer.at - publishAt).toBeLessThan(1_000);
  }, 90_000);
});
