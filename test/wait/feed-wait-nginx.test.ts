import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey } from '../support/api.js';
import { killApis, spawnApi, type ApiProcess } from '../support/api-process.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { freePort, nginxMissing, startNginx, type Nginx } from '../support/tools/nginx.js';
import { skipWithoutTool } from '../support/tools/required-tool.js';
import { tempDir } from '../support/snapshot-fixture.js';
import { killWorkers, runWorker, workerEnv } from '../support/worker.js';
import { startTestCms, type TestCms } from '../fakes/test-cms.js';

/*
 * `wait` through nginx with the location block of docs/operations.md (proxy_read_timeout
 * 70s): a waiting request is woken by a sync in another process, and one that times out is
 * the API's empty page, not nginx's 504. A second location keeps nginx's default 60 s timeout
 * shortened to 2 s, to show what a too-short proxy timeout does.
 */

// Skipped with the reason printed where nginx is missing; a failure on CI (required-tool.ts).
const missing = skipWithoutTool('nginx', nginxMissing());
const dir = tempDir();
let cms: TestCms;
let api: ApiProcess;
let nginx: Nginx;
let base = '';
let key = '';
const snapshot = dir.path('snapshot.db');

async function sync(): Promise<number> {
  const worker = await runWorker(['--once'], workerEnv({ DATABASE_PATH: snapshot, CMS_BASE_URL: cms.url, LOG_LEVEL: 'warn' }), 60_000);
  expect(worker.code, worker.stderr).toBe(0);
  return Date.now();
}

beforeAll(async () => {
  if (missing) return;
  cms = await startTestCms();
  cms.store.upsertSection('en', rawSection({ slug: 'fiber' }));
  cms.store.upsertArticle(rawArticle({ slug: 'first', section_slug: 'fiber' }));
  await sync();
  key = addKey(snapshot, 'Proxied Partner').key;
  api = await spawnApi({ DATABASE_PATH: snapshot });
  const upstream = new URL(api.url).host;
  const port = await freePort();
  nginx = await startNginx(
    dir.path('.'),
    `
  upstream syndication_api { server ${upstream}; keepalive 8; }
  server {
    listen 127.0.0.1:${port};
    location /api/v1/changes {
      proxy_pass http://syndication_api;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_read_timeout 70s;
      proxy_send_timeout 70s;
    }
    location /short/ {
      proxy_pass http://syndication_api/;
      proxy_read_timeout 2s;
    }
  }`,
    [port],
  );
  base = `http://127.0.0.1:${port}`;
}, 120_000);

afterAll(async () => {
  await nginx?.stop();
  await killApis();
  await killWorkers();
  await cms?.close();
  dir.cleanup();
});

const get = async (path: string) => {
  const res = await fetch(`${base}${path}`, { headers: { 'X-API-Key': key } });
  return { status: res.status, body: (await res.json().catch(() => null)) as { data: { slug: string }[]; meta: { next: string } } | null, at: Date.now() };
};

describe.skipIf(missing)('wait behind nginx', () => {
  it('is answered within a second of a sync, through the proxy', async () => {
    const head = (await get('/api/v1/changes')).body!.meta.next;
    const waiting = get(`/api/v1/changes?since=${head}&wait=30`);
    await new Promise((r) => setTimeout(r, 500));
    const now = new Date().toISOString().replace(/\.\d{3}/, '');
    cms.store.upsertArticle(rawArticle({ slug: 'proxied', section_slug: 'fiber', updated_at: now }));
    const synced = await sync();
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body!.data.map((c) => c.slug)).toEqual(['proxied']);
    expect(answer.at - synced).toBeLessThan(1_000);
  }, 90_000);

  it('a wait with no change is the empty page through the documented block, a 504 through a proxy timeout shorter than the wait', async () => {
    const head = (await get('/api/v1/changes')).body!.meta.next;
    const [proper, short] = await Promise.all([get(`/api/v1/changes?since=${head}&wait=3`), get(`/short/api/v1/changes?since=${head}&wait=3`)]);
    expect(proper.status).toBe(200);
    expect(proper.body!.data).toEqual([]);
    expect(proper.body!.meta.next).toBe(head);
    expect(short.status).toBe(504);
  }, 60_000);
});
