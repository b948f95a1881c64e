import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { addKey, keysPathFor } from '../support/api.js';
import { killApis, spawnApi, type ApiProcess } from '../support/api-process.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { cliJson } from '../support/keys-helpers.js';
import { tempDir } from '../support/snapshot-fixture.js';
import { killWorkers, runWorker, workerEnv } from '../support/worker.js';
import { startTestCms, type TestCms } from '../fakes/test-cms.js';

/*
 * Two API processes over one snapshot and one keys database (two hosts in miniature): a sync
 * by the worker wakes the waiting requests of both within a second, SIGTERM to both answers
 * theirs, and the usage both counted adds up in the keys database.
 */

const dir = tempDir();
const snapshot = dir.path('snapshot.db');
let cms: TestCms;

beforeAll(async () => {
  cms = await startTestCms();
  cms.store.upsertSection('en', rawSection({ slug: 'fiber' }));
  cms.store.upsertArticle(rawArticle({ slug: 'first', section_slug: 'fiber' }));
  await sync();
}, 90_000);
afterEach(async () => {
  await killApis();
  await killWorkers();
});
afterAll(async () => {
  await cms.close();
  dir.cleanup();
});

async function sync(): Promise<number> {
  const worker = await runWorker(['--once'], workerEnv({ DATABASE_PATH: snapshot, CMS_BASE_URL: cms.url, LOG_LEVEL: 'warn' }), 60_000);
  expect(worker.code, worker.stderr).toBe(0);
  return Date.now();
}

async function get(api: ApiProcess, path: string, key: string) {
  const res = await fetch(`${api.url}${path}`, { headers: { 'X-API-Key': key } });
  return { status: res.status, body: (await res.json()) as { data: { slug: string }[]; meta: { next: string } }, at: Date.now() };
}

it('a sync wakes the waiting requests of both processes; both count usage into one keys database', async () => {
  const { id, key } = addKey(snapshot, 'Two Hosts');
  const [a, b] = [await spawnApi({ DATABASE_PATH: snapshot }), await spawnApi({ DATABASE_PATH: snapshot })];
  const head = (await get(a, '/api/v1/changes', key)).body.meta.next;
  expect((await get(b, '/api/v1/changes', key)).body.meta.next).toBe(head);
  const path = `/api/v1/changes?since=${head}&wait=30`;
  const waiting = [get(a, path, key), get(b, path, key)];
  await new Promise((r) => setTimeout(r, 500));
  const now = new Date().toISOString().replace(/\.\d{3}/, '');
  cms.store.upsertArticle(rawArticle({ slug: 'both', section_slug: 'fiber', updated_at: now }));
  const synced = await sync();
  for (const answer of await Promise.all(waiting)) {
    expect(answer.body.data.map((c) => c.slug)).toEqual(['both']);
    expect(answer.at - synced).toBeLessThan(1_000);
  }
  for (let i = 0; i < 3; i++) await get(a, '/api/v1/articles/both', key);
  for (let i = 0; i < 2; i++) await get(b, '/api/v1/articles/both', key);
  await get(b, '/api/v1/articles/first', key);
  // A waiting request in each, answered on SIGTERM.
  const later = (await get(a, '/api/v1/changes', key)).body.meta.next;
  const held = [get(a, `/api/v1/changes?since=${later}&wait=60`, key), get(b, `/api/v1/changes?since=${later}&wait=60`, key)];
  await new Promise((r) => setTimeout(r, 500));
  const stopping = Date.now();
  a.child.kill('SIGTERM');
  b.child.kill('SIGTERM');
  for (const answer of await Promise.all(held)) {
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual([]);
    expect(answer.at - stopping).toBeLessThan(1_000);
  }
  expect((await a.exited).code).toBe(0);
  expect((await b.exited).code).toBe(0);

  const [row] = await cliJson<{ key_id: number; changes: number; article: number; distinct_articles: number }[]>(
    ['usage', '--id', String(id)],
    keysPathFor(snapshot),
    { DATABASE_PATH: snapshot },
  );
  expect(row).toMatchObject({ key_id: id, changes: 7, article: 6, distinct_articles: 2 });
}, 120_000);
