import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openWriter } from '../../src/db/sqlite/connection.js';
import { revokeKey } from '../../src/keys/manage.js';
import { addKey, withKeys } from '../support/api.js';
import { killApis, spawnApi, type ApiProcess } from '../support/api-process.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { scrape } from '../support/prometheus.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../fakes/test-cms.js';
import { killWorkers, parsedLogs, spawnWorker, syncRuns, waitFor, workerEnv } from '../support/worker.js';

/*
 * Both metric endpoints scraped from the real entry points, as Prometheus would, and parsed
 * as the text exposition format.
 */

const dir = tempDir();
const dbPath = dir.path('snapshot.db');

afterAll(() => dir.cleanup());

describe('the API metrics endpoint (METRICS_PORT)', () => {
  let api: ApiProcess;
  let key: string;
  let revoked: string;

  beforeAll(async () => {
    buildSnapshot(dbPath, {
      sections: [rawSection({ slug: 'fiber' }), { ...rawSection({ slug: 'fiber' }), locale: 'zh' }],
      articles: [
        rawArticle({ slug: 'hello', section_slug: 'fiber', published_at: '2026-01-01T00:00:00Z' }),
        rawArticle({ slug: 'hello-too', section_slug: 'fiber', published_at: '2026-01-02T00:00:00Z' }),
      ],
      now: Date.now() - 120_000,
    });
    key = addKey(dbPath, 'Metrics Partner').key;
    const old = addKey(dbPath, 'Gone Partner');
    revoked = old.key;
    withKeys(dbPath, (keys) => revokeKey(keys, old.id, Date.now));
    const db = openWriter(dbPath, { busyTimeoutMs: 5_000 });
    db.$client.prepare(
      `INSERT INTO sync_runs (kind, status, started_at, finished_at, pid, host, error)
       VALUES ('full', 'succeeded', '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z', 1, 'h', NULL),
              ('incremental', 'failed', '2026-01-01T00:05:00Z', '2026-01-01T00:06:00Z', 1, 'h', 'HTTP 503')`,
    ).run();
    db.$client.close();
    api = await spawnApi({ DATABASE_PATH: dbPath, METRICS_PORT: '0' });
  });

  afterAll(() => killApis());

  it('counts responses by route and status, with the fast path, key refusals by reason, snapshot age and the last sync', async () => {
    const get = (path: string, headers: Record<string, string> = {}) => fetch(`${api.url}${path}`, { headers });
    for (let i = 0; i < 3; i++) expect((await get('/api/v1/articles', { 'X-API-Key': key })).status).toBe(200);
    expect((await get('/api/v1/articles/hello', { 'X-API-Key': key })).status).toBe(200);
    expect((await get('/api/v1/articles/nope', { 'X-API-Key': key })).status).toBe(404);
    expect((await get('/api/v1/articles')).status).toBe(401);
    expect((await get('/api/v1/articles', { 'X-API-Key': revoked })).status).toBe(401);
    expect((await get('/api/v1/articles', { 'X-API-Key': 'lsk_bad' })).status).toBe(401);
    expect((await get('/health')).status).toBe(200);
    expect((await get('/no/such/thing')).status).toBe(404);

    const m = await scrape(api.metricsUrl!);
    expect(m.types.get('syndication_http_requests_total')).toBe('counter');
    expect(m.types.get('syndication_http_request_duration_seconds')).toBe('histogram');
    expect(m.value('syndication_http_requests_total', { route: '/api/v1/articles', status: '200' })).toBe(3);
    expect(m.value('syndication_http_requests_total', { route: '/api/v1/articles', status: '401' })).toBe(3);
    // Slugs never become label values: one series for every article.
    expect(m.value('syndication_http_requests_total', { route: '/api/v1/articles/:slug', status: '200' })).toBe(1);
    expect(m.value('syndication_http_requests_total', { route: '/api/v1/articles/:slug', status: '404' })).toBe(1);
    expect(m.value('syndication_http_requests_total', { route: 'other', status: '404' })).toBe(1);
    expect(m.value('syndication_http_requests_total', { route: '/health', status: '200' })).toBe(1);
    expect(m.samples.some((s) => Object.values(s.labels).some((v) => v.includes('hello') || v.includes('/no/such')))).toBe(false);
    expect(m.value('syndication_http_request_duration_seconds_count', { route: '/api/v1/articles', status: '200' })).toBe(3);
    expect(m.value('syndication_http_request_duration_seconds_bucket', { route: '/api/v1/articles', status: '200', le: '+Inf' })).toBe(3);
    // The third identical list request was a cached answer (an answer is kept on its second request).
    expect(m.value('syndication_fast_path_responses_total')).toBe(1);
    expect(m.value('syndication_key_refusals_total', { reason: 'missing_api_key' })).toBe(1);
    expect(m.value('syndication_key_refusals_total', { reason: 'revoked_api_key' })).toBe(1);
    expect(m.value('syndication_key_refusals_total', { reason: 'invalid_api_key' })).toBe(1);
    const age = m.value('syndication_snapshot_age_seconds')!;
    expect(age).toBeGreaterThanOrEqual(120);
    expect(age).toBeLessThan(3_600);
    expect(m.value('syndication_last_sync_success_timestamp_seconds')).toBe(Date.parse('2026-01-01T00:01:00Z') / 1000);
    expect(m.value('syndication_last_sync_failed')).toBe(1);
    expect(m.value('syndication_search_engine_up')).toBe(1);
    // The process's own metrics come with it.
    expect(m.value('process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('counts searches admitted and refused by reason, and shows none in flight once they answered', async () => {
    // One slot, no queue, one key: of searches sent at once, those arriving while one runs are
    // refused at arrival (queue_full here, as there is no place to wait). The timeout is
    // raised far above the default 2 s: on a loaded CI machine the first search on a cold thread
    // can take longer, and this test counts refusals at arrival, not timeouts.
    const busy = await spawnApi({ DATABASE_PATH: dbPath, METRICS_PORT: '0', SEARCH_WORKERS: '1', SEARCH_CONCURRENCY: '1', SEARCH_QUEUE: '0', SEARCH_TIMEOUT_MS: '60000' });
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${busy.url}/api/v1/search?q=hello+w${i}`, { headers: { 'X-API-Key': key } }).then(async (r) => {
          await r.arrayBuffer();
          return r.status;
        }),
      ),
    );
    const answered = statuses.filter((s) => s === 200).length;
    const refused = statuses.filter((s) => s === 503).length;
    expect(answered + refused).toBe(20);
    expect(refused).toBeGreaterThan(0);

    const paged = await fetch(`${busy.url}/api/v1/search?q=article&limit=1`, { headers: { 'X-API-Key': key } });
    expect(((await paged.json()) as { meta: { total: number } }).meta.total).toBe(2);
    const m = await scrape(busy.metricsUrl!);
    expect(m.types.get('syndication_search_pool_refused_total')).toBe('counter');
    const byReason = ['queue_full', 'wait', 'shed', 'timeout'].map((reason) => m.value('syndication_search_pool_refused_total', { reason }) ?? 0);
    expect(byReason.reduce((a, b) => a + b)).toBe(refused);
    expect(m.value('syndication_search_pool_refused_total', { reason: 'timeout' })).toBe(0);
    expect(m.value('syndication_search_admitted_total')).toBe(answered + 1);
    expect(m.value('syndication_load_refusals_total', { reason: 'search_busy' })).toBe(refused);
    expect(m.value('syndication_search_in_flight')).toBe(0);
    expect(m.value('syndication_search_queued')).toBe(0);
    expect(m.value('syndication_search_threads_replaced_total')).toBe(0);
    // The search with a second page (a ranking without one is not kept).
    expect(m.value('syndication_search_ranked_cache_bytes')).toBeGreaterThan(0);
  });

  it('is not served on the partners port, and answers nothing but /metrics on its own', async () => {
    expect((await fetch(`${api.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${api.metricsUrl}/`)).status).toBe(404);
  });
});

describe('the worker metrics endpoint (WORKER_METRICS_PORT)', () => {
  let cms: TestCms;

  afterEach(async () => {
    await killWorkers();
    await cms?.close();
  });

  it('counts runs by kind and result, their duration, articles changed and the last success', async () => {
    cms = await startTestCms();
    cms.store.upsertSection('en', rawSection({ slug: 'news' }));
    cms.store.upsertSection('zh', rawSection({ slug: 'news' }));
    cms.store.upsertArticles(Array.from({ length: 4 }, (_, i) => rawArticle({ slug: `story-${i}`, section_slug: 'news' })));
    const workerDb = dir.path('worker.db');
    const daemon = spawnWorker(
      [],
      workerEnv({
        DATABASE_PATH: workerDb,
        CMS_BASE_URL: cms.url,
        SYNC_CRON: '* * * * * *',
        SYNC_FULL_CRON: '0 0 1 1 *',
        CMS_MAX_ATTEMPTS: '1',
        WORKER_METRICS_PORT: '0',
      }),
    );
    await daemon.waitForStdout(/worker metrics on/);
    const port = parsedLogs(daemon.stdout.split('\n')).find((l) => l.metricsPort !== undefined)!.metricsPort as number;
    const metricsUrl = `http://127.0.0.1:${port}`;
    await waitFor(() => syncRuns(workerDb).filter((r) => r.status === 'succeeded').length >= 2, { timeoutMs: 15_000, what: 'two runs' });
    cms.failNext(50, { status: 500 });
    await waitFor(() => syncRuns(workerDb).some((r) => r.status === 'failed'), { timeoutMs: 15_000, what: 'a failed run' });

    // A run is recorded in the database just before its metrics: wait for them to agree.
    const m = await waitFor(async () => {
      const scraped = await scrape(metricsUrl);
      return (scraped.sum('syndication_sync_runs_total', { result: 'failed' }) ?? 0) >= 1 && scraped;
    }, { timeoutMs: 10_000, what: 'the failed run in the metrics' });
    expect(m.types.get('syndication_sync_runs_total')).toBe('counter');
    expect(m.value('syndication_sync_runs_total', { kind: 'full', result: 'succeeded' })).toBe(1);
    expect(m.value('syndication_sync_runs_total', { kind: 'incremental', result: 'succeeded' })).toBeGreaterThanOrEqual(1);
    expect(m.value('syndication_sync_articles_changed_total', { kind: 'full', change: 'upserted' })).toBe(4);
    expect(m.value('syndication_sync_duration_seconds_count', { kind: 'full', result: 'succeeded' })).toBe(1);
    const lastFull = m.value('syndication_sync_last_success_timestamp_seconds', { kind: 'full' })!;
    expect(Math.abs(lastFull - Date.now() / 1000)).toBeLessThan(600);

    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  });
});
