import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey } from '../support/api.js';
import { killApis, spawnApi, type ApiProcess } from '../support/api-process.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { parseExposition } from '../support/prometheus.js';
import { findPromtool, promtool } from '../support/tools/promtool.js';
import { skipWithoutTool } from '../support/tools/required-tool.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../fakes/test-cms.js';
import { killWorkers, parsedLogs, REPO_ROOT, spawnWorker, syncRuns, waitFor, workerEnv } from '../support/worker.js';

/*
 * Issue 23 item 3: the alert rules and the scrape configuration operators load
 * (docs/operations/prometheus/), checked by Prometheus's own promtool: the rules load, each
 * rule's expression does what its test series say (an over-rate partner never pages, a real
 * 5xx burst does), and the real scrapes of the API and the worker pass `promtool check metrics`.
 */

const FOLDER = join(REPO_ROOT, 'docs/operations/prometheus');
// Skipped with the reason printed where promtool is missing; a failure on CI (required-tool.ts).
const available = !skipWithoutTool('promtool', findPromtool() ? undefined : 'not on PATH (Debian\'s prometheus package)');

describe.skipIf(!available)('the shipped Prometheus files', () => {
  it('load: promtool check rules and check config succeed', () => {
    const rules = promtool(['check', 'rules', join(FOLDER, 'alerts.yml')]);
    expect(rules.code, rules.output).toBe(0);
    expect(rules.output).toMatch(/SUCCESS: \d+ rules found/);
    const config = promtool(['check', 'config', join(FOLDER, 'scrape.yml')]);
    expect(config.code, config.output).toBe(0);
  });

  it("pass their unit tests: an over-rate partner pages nothing, a real 5xx burst pages, each rule fires on its series", () => {
    const tests = promtool(['test', 'rules', join(FOLDER, 'alerts.test.yml')]);
    expect(tests.code, tests.output).toBe(0);
    expect(tests.output).toContain('SUCCESS');
  });

  it('name only jobs the scrape configuration defines, and every rule has a test and a severity', () => {
    const scrape = readFileSync(join(FOLDER, 'scrape.yml'), 'utf8');
    const alerts = readFileSync(join(FOLDER, 'alerts.yml'), 'utf8');
    const tests = readFileSync(join(FOLDER, 'alerts.test.yml'), 'utf8');
    const jobs = [...scrape.matchAll(/job_name: (\S+)/g)].map((m) => m[1]!);
    expect(jobs.sort()).toEqual(['syndication-api', 'syndication-worker']);
    for (const [, name] of alerts.matchAll(/job="([^"]+)"/g)) expect(jobs).toContain(name);
    for (const [, pattern] of alerts.matchAll(/job=~"([^"]+)"/g)) {
      for (const job of jobs) expect(job).toMatch(new RegExp(`^(?:${pattern})$`));
    }
    const names = [...alerts.matchAll(/- alert: (\S+)/g)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThanOrEqual(8);
    for (const name of names) expect(tests, `a test of ${name}`).toMatch(new RegExp(`alertname: ${name}\\b`));
    expect([...alerts.matchAll(/^ +severity: (\S+)$/gm)].map((m) => m[1])).toHaveLength(names.length);
  });
});

// Same rule as above: promtool missing here (`.ci/run` installs it).
describe.skipIf(!available)('promtool check metrics on real scrapes', () => {
  const dir = tempDir('promtool-');
  let api: ApiProcess;
  let cms: TestCms;
  /** The error codes of the API's answers to one partner sending too fast. */
  const codes: string[] = [];

  beforeAll(async () => {
    // No snapshot yet (a new installation whose first sync has not run): content answers 503
    // service_unavailable, a real failure. Then the snapshot arrives, and the partner sends
    // requests together on a key allowed 60 a minute with a burst of one second's worth: all
    // but one or two are refused with 503 rate_limited.
    const dbPath = dir.path('snapshot.db');
    const { key } = addKey(dbPath, 'Over-rate Partner');
    api = await spawnApi({ DATABASE_PATH: dbPath, METRICS_PORT: '0', RATE_LIMIT_PER_MINUTE: '60', RATE_LIMIT_BURST_SECONDS: '1' });
    const send = async (): Promise<number> => {
      const res = await fetch(`${api.url}/api/v1/articles`, { headers: { 'X-API-Key': key } });
      const body = (await res.json()) as { error?: { code: string } };
      if (body.error) codes.push(body.error.code);
      return res.status;
    };
    expect(await send()).toBe(503);
    buildSnapshot(dbPath, {
      sections: [rawSection({ slug: 'fiber' }), { ...rawSection({ slug: 'fiber' }), locale: 'zh' }],
      articles: [rawArticle({ slug: 'hello', section_slug: 'fiber', published_at: '2026-01-01T00:00:00Z' })],
      now: Date.now() - 60_000,
    });
    await waitFor(async () => (await send()) === 200, { timeoutMs: 20_000, what: 'the API to serve the new snapshot' });
    await Promise.all(Array.from({ length: 6 }, send));
    expect((await fetch(`${api.url}/api/v1/articles`)).status).toBe(401);
  }, 60_000);

  afterAll(async () => {
    await killApis();
    await killWorkers();
    await cms?.close();
    dir.cleanup();
  });

  it("the API's /metrics passes; a partner over its rate is a load refusal, the missing snapshot a server error", async () => {
    const text = await (await fetch(`${api.metricsUrl}/metrics`)).text();
    expect(promtool(['check', 'metrics'], text)).toEqual({ code: 0, output: '' });

    const m = parseExposition(text);
    const rateLimited = codes.filter((c) => c === 'rate_limited').length;
    const unavailable = codes.filter((c) => c === 'service_unavailable').length;
    expect(rateLimited).toBeGreaterThan(0);
    expect(unavailable).toBeGreaterThan(0);
    expect(rateLimited + unavailable).toBe(codes.length);
    expect(m.value('syndication_http_requests_total', { route: '/api/v1/articles', status: '503' })).toBe(codes.length);
    expect(m.value('syndication_load_refusals_total', { reason: 'rate_limited' })).toBe(rateLimited);
    expect(m.value('syndication_server_errors_total', { code: 'service_unavailable' })).toBe(unavailable);
    // Known series are there from the start, at 0.
    expect(m.value('syndication_load_refusals_total', { reason: 'search_busy' })).toBe(0);
    expect(m.value('syndication_server_errors_total', { code: 'internal_error' })).toBe(0);
    // What operators keep of the defaults, without the gauges named like counters.
    expect(m.types.get('nodejs_active_handles')).toBe('gauge');
    expect(m.types.has('nodejs_active_handles_total')).toBe(false);
    expect(m.value('process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it("the worker's /metrics passes after a run", async () => {
    cms = await startTestCms();
    cms.store.upsertSection('en', rawSection({ slug: 'news' }));
    cms.store.upsertArticles([rawArticle({ slug: 'story', section_slug: 'news' })]);
    const workerDb = dir.path('worker.db');
    const daemon = spawnWorker(
      [],
      workerEnv({ DATABASE_PATH: workerDb, CMS_BASE_URL: cms.url, SYNC_CRON: '0 0 1 1 *', SYNC_FULL_CRON: '0 0 1 1 *', WORKER_METRICS_PORT: '0' }),
    );
    await daemon.waitForStdout(/worker metrics on/, 60_000);
    const port = parsedLogs(daemon.stdout.split('\n')).find((l) => l.metricsPort !== undefined)!.metricsPort as number;
    await waitFor(() => syncRuns(workerDb).some((r) => r.status === 'succeeded'), { timeoutMs: 60_000, what: 'the first run' });
    const text = await waitFor(
      async () => {
        const scraped = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        return scraped.includes('syndication_sync_runs_total{') && scraped;
      },
      { timeoutMs: 10_000, what: 'the run in the metrics' },
    );
    const lint = promtool(['check', 'metrics'], text);
    expect(lint.output).toBe('');
    expect(lint.code).toBe(0);
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  }, 150_000);
});
