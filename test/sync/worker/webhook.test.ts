import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhook } from '../../../sync/webhook.js';
import { corpusSections } from '../../support/cms-fixtures.js';
import { article } from '../../support/feed-harness.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import { killWorkers, query, runWorker, spawnWorker, syncRuns, waitFor, workerEnv, type WorkerProcess } from '../../support/worker.js';

/*
 * The CMS webhook against the real worker process: a real HTTP request to the port it opens.
 */

const SECRET = 'a-webhook-secret-of-some-length';
const dir = tempDir('webhook-test-');
const databasePath = dir.path('snapshot.db');
let cms: TestCms;
let worker: WorkerProcess;
let hookUrl: string;

const env = () =>
  workerEnv({
    DATABASE_PATH: databasePath,
    CMS_BASE_URL: cms.url,
    // Schedules that never come during the test: only webhooks start runs.
    SYNC_CRON: '0 0 1 1 *',
    SYNC_FULL_CRON: '0 0 1 1 *',
    WEBHOOK_PORT: '0',
    WEBHOOK_SECRET: SECRET,
    LOG_LEVEL: 'info',
  });

function post(body: string, options: { timestamp?: number; signature?: string; method?: string } = {}) {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  return fetch(hookUrl, {
    method: options.method ?? 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Webhook-Timestamp': String(timestamp),
      'X-Webhook-Signature': options.signature ?? signWebhook(SECRET, timestamp, body),
    },
    ...(options.method === 'GET' ? {} : { body }),
  });
}

const succeeded = () => syncRuns(databasePath).filter((r) => r.status === 'succeeded').length;
const idle = () => syncRuns(databasePath).every((r) => r.status !== 'running');

beforeAll(async () => {
  cms = await startTestCms();
  for (const s of corpusSections('en')) cms.store.upsertSection('en', s);
  for (const s of corpusSections('zh')) cms.store.upsertSection('zh', s);
  cms.store.upsertArticle(article('first', { section_slug: 'markets', updated_at: new Date().toISOString() }));
  worker = spawnWorker([], env());
  await worker.waitForStdout(/CMS webhook listening/, 20_000);
  const port = /"webhookPort":(\d+)/.exec(worker.stdout)![1];
  hookUrl = `http://127.0.0.1:${port}/hooks/cms`;
  await waitFor(() => succeeded() === 1 && idle(), { timeoutMs: 20_000, what: 'the first sync' });
});

afterAll(async () => {
  await killWorkers();
  await cms?.close();
  dir.cleanup();
});

describe('CMS webhook (POST /hooks/cms)', () => {
  it('refuses a bad signature, an old timestamp, another method and an oversized body, and runs nothing', async () => {
    const body = JSON.stringify({ event: 'article.published', id: 'x' });
    const bad = await post(body, { signature: signWebhook('another-secret-of-length', Math.floor(Date.now() / 1000), body) });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ error: { code: 'invalid_signature' } });

    const old = Math.floor(Date.now() / 1000) - 3_600;
    const stale = await post(body, { timestamp: old });
    expect(stale.status).toBe(401);
    expect(((await stale.json()) as { error: { code: string } }).error.code).toBe('stale_timestamp');

    const unsigned = await fetch(hookUrl, { method: 'POST', body });
    expect(unsigned.status).toBe(401);
    expect(((await unsigned.json()) as { error: { code: string } }).error.code).toBe('missing_signature');

    const get = await post(body, { method: 'GET' });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');

    const huge = 'x'.repeat(200 * 1024);
    const large = await post(huge).catch((error: Error) => error);
    // The worker may close the connection after its 413: either answer shows the refusal.
    if (!(large instanceof Error)) {
      expect(large.status).toBe(413);
      expect(((await large.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
    }
    expect(succeeded()).toBe(1);
    expect(syncRuns(databasePath)).toHaveLength(1);
  });

  it('starts an incremental sync at once for a valid call, so the change reaches the feed, and refuses its replay', async () => {
    cms.store.upsertArticle(article('second', { section_slug: 'markets', updated_at: new Date().toISOString() }));
    const body = JSON.stringify({ event: 'article.published', id: 'second' });
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signWebhook(SECRET, timestamp, body);
    const res = await post(body, { timestamp, signature });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ status: 'accepted', sync: 'started' });
    await waitFor(() => succeeded() === 2 && idle(), { what: 'the webhook sync' });
    expect(syncRuns(databasePath).at(-1)!.kind).toBe('incremental');
    expect(query(databasePath, `SELECT slug, kind FROM feed_entries WHERE slug = 'story-second'`)).toEqual([
      { slug: 'story-second', kind: 'upsert' },
    ]);

    const replay = await post(body, { timestamp, signature });
    expect(replay.status).toBe(409);
    expect(((await replay.json()) as { error: { code: string } }).error.code).toBe('replayed');
  });

  it('coalesces calls that arrive during a run into one follow-up run, never two at a time', async () => {
    const before = syncRuns(databasePath).length;
    cms.setDelay(150);
    try {
      const answers: string[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await post(JSON.stringify({ event: 'article.updated', n: i }));
        answers.push(((await res.json()) as { sync: string }).sync);
      }
      expect(answers[0]).toBe('started');
      expect(answers.slice(1)).toEqual(['queued', 'queued', 'queued']);
      await waitFor(() => syncRuns(databasePath).length === before + 2 && idle(), { timeoutMs: 20_000, what: 'the follow-up run' });
    } finally {
      cms.setDelay(0);
    }
    const runs = syncRuns(databasePath).slice(before);
    expect(runs.map((r) => [r.kind, r.status])).toEqual([
      ['incremental', 'succeeded'],
      ['incremental', 'succeeded'],
    ]);
    // One at a time: the follow-up started after the first one finished.
    expect(runs[1]!.started_at >= runs[0]!.finished_at!).toBe(true);
  });

  it('shows the last webhook received in `sync -- status` and `sync -- --status`', async () => {
    for (const args of [['status'], ['--status']]) {
      const { code, stdout } = await runWorker(args, workerEnv({ DATABASE_PATH: databasePath }));
      expect(code).toBe(0);
      expect(stdout).toMatch(/Last webhook: \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z, 202 accepted, sync (started|queued)/);
    }
  });
});
