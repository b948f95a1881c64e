import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/paths.js';
import { article, section, startFeedHarness, type FeedHarness } from '../support/feed-harness.js';

/*
 * The partners' guide's mirror example (docs/partners.md, docs/examples/mirror.ts), run as a partner would run it, as a
 * child process against a real API over a snapshot synced from the test CMS.
 */

let h: FeedHarness;
let keyFile: string;
let statePath: string;

beforeAll(async () => {
  h = await startFeedHarness();
  // The example uses the real clock through the API: keep the harness clock near it.
  h.clock.set(Date.now());
  h.cms.store.upsertSection('en', section('news'));
  for (let i = 0; i < 7; i++) h.cms.store.upsertArticle(article(`m${i}`, { updated_at: h.nowIso(), published_at: '2026-01-01T00:00:00Z' }));
  await h.sync('full');
  keyFile = join(h.databasePath, '..', 'key.txt');
  statePath = join(h.databasePath, '..', 'mirror.json');
  writeFileSync(keyFile, `${h.key}\n`);
});
afterAll(async () => {
  await h?.close();
});

function runMirror(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(
    process.execPath,
    [join(projectRoot(), 'dist/docs/examples/mirror.js'), '--api', h.api.url, '--key-file', keyFile, '--locale', 'en', '--state', statePath],
    { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d));
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

async function expectCopyEqualsCatalogue() {
  const { code, stdout, stderr } = await runMirror();
  expect(code, stderr).toBe(0);
  const state = JSON.parse(readFileSync(statePath, 'utf8')) as { articles: Record<string, unknown> };
  expect(state.articles).toEqual(Object.fromEntries(await h.catalogue('en')));
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { pages: number; upserts: number; deletes: number; restarted: boolean; notModified: boolean };
}

describe('the mirror example script', () => {
  it('builds a copy equal to the catalogue, then follows edits and takedowns', async () => {
    expect(await expectCopyEqualsCatalogue()).toMatchObject({ upserts: 7, deletes: 0 });

    h.clock.set(Date.now());
    const m1 = h.cms.store.getArticle('m1')!;
    h.cms.store.upsertArticle({ ...m1, title: 'Edited', updated_at: h.nowIso() });
    const m2 = h.cms.store.getArticle('m2')!;
    h.cms.store.upsertArticle({ ...m2, status: 'archived', updated_at: h.nowIso() });
    await h.sync('incremental');
    expect(await expectCopyEqualsCatalogue()).toMatchObject({ upserts: 1, deletes: 1, restarted: false });
  });

  it('polls with If-None-Match and gets a 304 when nothing changed', async () => {
    // The first poll with nothing new reads one empty page and keeps its ETag; the next is a 304.
    expect(await expectCopyEqualsCatalogue()).toMatchObject({ notModified: false, pages: 1, upserts: 0, deletes: 0 });
    const state = JSON.parse(readFileSync(statePath, 'utf8')) as { cursor: string; etag: string | null };
    expect(state.etag).toMatch(/^"/);
    // The ETag it keeps is the one of its next request. (Node's fetch adds Cache-Control:
    // no-cache to conditional requests, which the API honours until conditional requests
    // ignore it; supertest sends the request exactly as a partner's plain HTTP client would.)
    const again = await h.api.request
      .get(`/api/v1/changes?locale=en&since=${state.cursor}`)
      .set('X-API-Key', h.key)
      .set('If-None-Match', state.etag!);
    expect(again.status).toBe(304);
    expect((await expectCopyEqualsCatalogue()).upserts).toBe(0);
  });

  it('starts over from the beginning on invalid_cursor and still ends equal to the catalogue', async () => {
    const state = JSON.parse(readFileSync(statePath, 'utf8')) as Record<string, unknown>;
    writeFileSync(statePath, JSON.stringify({ ...state, cursor: 'c_00000000_0_0', etag: null }));
    expect(await expectCopyEqualsCatalogue()).toMatchObject({ restarted: true });
  });
});
