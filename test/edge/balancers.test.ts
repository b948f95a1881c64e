import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addKey } from '../support/api.js';
import { killApis, spawnApi, type ApiProcess } from '../support/api-process.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { haproxyMissing, startHaproxy, type Haproxy } from '../support/tools/haproxy.js';
import { freePort, nginxMissing, startNginx, type Nginx } from '../support/tools/nginx.js';
import { skipWithoutTool } from '../support/tools/required-tool.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';

/*
 * Two independent API processes (two hosts in miniature: one snapshot, one keys database)
 * behind a real HAProxy that health-checks /health, and behind a real nginx, as the operations
 * guide sets them up: one process is stopped (SIGTERM) and started again under steady load,
 * and not one request fails; a key's rate holds over both processes.
 */

const dir = tempDir('balancers-');
const dbPath = dir.path('snapshot.db');
// Skipped with the reason printed where haproxy or nginx is missing; a failure on CI (required-tool.ts).
const noHaproxy = skipWithoutTool('haproxy', haproxyMissing());
const noNginx = skipWithoutTool('nginx', nginxMissing());

beforeAll(() => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber' }), { ...rawSection({ slug: 'fiber' }), locale: 'zh' }],
    articles: [rawArticle({ slug: 'hello', section_slug: 'fiber', published_at: '2026-01-01T00:00:00Z' })],
  });
});
let proxies: Array<Haproxy | Nginx> = [];
afterEach(async () => {
  await Promise.all(proxies.map((p) => p.stop()));
  proxies = [];
  await killApis();
});
afterAll(() => dir.cleanup());

/** One GET on a fresh connection to the balancer: its status, or the connection error's code. */
function get(port: number, path: string, key: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, headers: { 'X-API-Key': key, Connection: 'close' } }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
      res.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    req.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.setTimeout(15_000, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.end();
  });
}

const healthChecks = (api: ApiProcess) => api.logs().filter((l) => (l.req as { url?: string } | undefined)?.url === '/health').length;
const answered = (api: ApiProcess) => api.logs().filter((l) => String((l.req as { url?: string } | undefined)?.url).startsWith('/api/v1/')).length;

// What the operations guide recommends: longer than the balancer's inter x fall (0.5 s x 2).
const API_ENV = { DATABASE_PATH: dbPath, SHUTDOWN_DELAY_MS: '2500', SHUTDOWN_TIMEOUT_MS: '5000' };

/**
 * 20 requests a second through the balancer while `restart` runs; every status or error seen.
 */
async function underLoad(port: number, key: string, restart: () => Promise<void>): Promise<Array<number | string>> {
  const results: Array<number | string> = [];
  let done = false;
  const loop = (async () => {
    const pending: Array<Promise<void>> = [];
    while (!done) {
      pending.push(get(port, '/api/v1/articles', key).then((r) => void results.push(r)));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await Promise.all(pending);
  })();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  await restart();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  done = true;
  await loop;
  return results;
}

const NOTICE = 'stopping: /health answers 503 draining while requests are still served';

/**
 * Stops `api` with SIGTERM, waits for its exit, starts it again on its port; the new process.
 * `watched`: a balancer health-checks it, so it waited SHUTDOWN_DELAY_MS with /health at 503.
 */
async function restartOne(api: ApiProcess, port: number, watched: boolean): Promise<ApiProcess> {
  api.child.kill('SIGTERM');
  expect((await api.exited).code).toBe(0);
  expect(api.logs().map((l) => String(l.msg)).includes(NOTICE)).toBe(watched);
  return spawnApi({ ...API_ENV, PORT: String(port) });
}

describe.skipIf(noHaproxy)('behind HAProxy health-checking /health', () => {
  async function setUp(env: Record<string, string> = {}) {
    const [a, b, front] = [await freePort(), await freePort(), await freePort()];
    const apis = [await spawnApi({ ...API_ENV, ...env, PORT: String(a) }), await spawnApi({ ...API_ENV, ...env, PORT: String(b) })];
    const haproxy = await startHaproxy(
      dir.path('.'),
      `frontend partners
  bind 127.0.0.1:${front}
  default_backend api
backend api
  balance roundrobin
  option httpchk
  http-check send meth GET uri /health
  default-server inter 500ms fall 2 rise 2
  server a 127.0.0.1:${a} check
  server b 127.0.0.1:${b} check`,
      front,
    );
    proxies.push(haproxy);
    // Both up: each has answered health checks (rise 2).
    await expect.poll(() => apis.every((api) => healthChecks(api) >= 2), { timeout: 10_000 }).toBe(true);
    return { apis, ports: [a, b] as const, front, haproxy };
  }

  it('loses no request while one of two processes is stopped (SIGTERM) and started again', async () => {
    const { key } = addKey(dbPath, 'HAProxy Partner');
    const { apis, ports, front, haproxy } = await setUp();
    let replacement: ApiProcess | undefined;
    const results = await underLoad(front, key, async () => {
      replacement = await restartOne(apis[0]!, ports[0], true);
      await expect.poll(() => healthChecks(replacement!) >= 2, { timeout: 10_000 }).toBe(true);
    });
    const failed = results.filter((r) => r !== 200);
    expect(failed, haproxy.output()).toEqual([]);
    expect(results.length).toBeGreaterThan(40);
    // The restarted process is back in rotation.
    await expect.poll(() => answered(replacement!), { timeout: 5_000 }).toBeGreaterThan(0);
  }, 120_000);

  it("holds a key's rate over both processes with RATE_LIMIT_PROCESSES=2: 10 of 30 quick requests at 60/min, burst 10 s", async () => {
    const { key } = addKey(dbPath, 'Limited Partner', { rateLimitPerMinute: 60 });
    const { front } = await setUp({ RATE_LIMIT_PROCESSES: '2', RATE_LIMIT_BURST_SECONDS: '10' });
    const statuses: Array<number | string> = [];
    for (let i = 0; i < 30; i++) statuses.push(await get(front, '/api/v1/articles', key));
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s !== 200 && s !== 429 && s !== 503)).toEqual([]);
  }, 120_000);
});

describe.skipIf(noNginx)('behind nginx', () => {
  it('loses no request while one of two processes is stopped (SIGTERM) and started again', async () => {
    const { key } = addKey(dbPath, 'nginx Partner');
    const [a, b, front] = [await freePort(), await freePort(), await freePort()];
    const apis = [await spawnApi({ ...API_ENV, PORT: String(a) }), await spawnApi({ ...API_ENV, PORT: String(b) })];
    // The operations guide's recipe: keep-alive to the processes, a refused or reset connection
    // retried on the other one (nginx's default for GET and HEAD).
    const nginx = await startNginx(
      dir.path('.'),
      `
  upstream api {
    server 127.0.0.1:${a} max_fails=1 fail_timeout=2s;
    server 127.0.0.1:${b} max_fails=1 fail_timeout=2s;
    keepalive 16;
  }
  server {
    listen 127.0.0.1:${front};
    location / {
      proxy_pass http://api;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_next_upstream error timeout;
    }
  }`,
      [front],
    );
    proxies.push(nginx);
    let replacement: ApiProcess | undefined;
    const results = await underLoad(front, key, async () => {
      // nginx (open source) has no active health check: nothing asks /health, so the process
      // stops at once, and nginx retries the refused connections on the other process.
      replacement = await restartOne(apis[0]!, a, false);
    });
    const failed = results.filter((r) => r !== 200);
    expect(failed, nginx.errors()).toEqual([]);
    expect(results.length).toBeGreaterThan(40);
    await expect.poll(async () => {
      await get(front, '/api/v1/articles', key);
      return answered(replacement!);
    }, { timeout: 10_000 }).toBeGreaterThan(0);
  }, 120_000);
});
