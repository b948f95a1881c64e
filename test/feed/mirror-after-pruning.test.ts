import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/paths.js';
import { formatUtcSeconds } from '../../src/lib/time.js';
import { article, section, startFeedHarness, type FeedHarness } from '../support/feed-harness.js';
import { retainedDeletes } from './reader.js';

/*
 * The partners' guide's mirror example (docs/examples/mirror.ts), run as a child process as a
 * partner would, across real prunings (FEED_RETENTION_DAYS=1, the clock moved by days). 120
 * articles: its pages of 100 end on old upserts, before the pruned deletes (issue 34).
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let h: FeedHarness;
let keyFile: string;
const state = (name: string) => join(h.databasePath, '..', `${name}.json`);

beforeAll(async () => {
  // Days before the real time, so that the moved clock stays behind it.
  h = await startFeedHarness({ start: formatUtcSeconds(Date.now() - 10 * DAY), feedRetentionDays: 1 });
  h.cms.store.upsertSection('en', section('news'));
  for (let i = 0; i < 120; i++) h.cms.store.upsertArticle(article(`m${String(i).padStart(3, '0')}`, { updated_at: h.nowIso() }));
  await h.sync('full');
  keyFile = join(h.databasePath, '..', 'key.txt');
  writeFileSync(keyFile, `${h.key}\n`);
});
afterAll(async () => {
  await h?.close();
});

function runMirror(statePath: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
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

/** Runs the example once on a state file; checks its copy equals the catalogue; returns its summary. */
async function mirror(name: string) {
  const { code, stdout, stderr } = await runMirror(state(name));
  expect(code, stderr).toBe(0);
  const copy = JSON.parse(readFileSync(state(name), 'utf8')) as { articles: Record<string, unknown> };
  expect(copy.articles).toEqual(Object.fromEntries(await h.catalogue('en')));
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { pages: number; upserts: number; deletes: number; restarted: boolean };
}

function takeDown(id: string) {
  h.cms.store.upsertArticle({ ...h.cms.store.getArticle(id)!, status: 'archived', updated_at: h.nowIso() });
}

describe('the mirror example across prunings', () => {
  it('keeps mirrors started before, between and after prunings equal to the catalogue', async () => {
    expect(await mirror('before')).toMatchObject({ pages: 2, upserts: 120, restarted: false });
    expect(await mirror('on-time')).toMatchObject({ pages: 2, upserts: 120, restarted: false });

    h.clock.advance(HOUR);
    takeDown('m110');
    await h.sync('incremental');
    expect(retainedDeletes(h, 'en')).toEqual(['story-m110']);
    expect(await mirror('on-time')).toMatchObject({ deletes: 1, restarted: false });
    expect(await mirror('between')).toMatchObject({ pages: 2, upserts: 119, deletes: 1, restarted: false });

    h.clock.advance(2 * DAY);
    await h.sync('incremental');
    expect(retainedDeletes(h, 'en')).toEqual([]);
    // It holds story-m110 and its cursor is before the pruned delete: it starts over, once.
    expect(await mirror('before')).toMatchObject({ pages: 2, upserts: 119, deletes: 0, restarted: true });
    expect(await mirror('on-time')).toMatchObject({ pages: 1, upserts: 0, restarted: false });
    expect(await mirror('between')).toMatchObject({ pages: 1, upserts: 0, restarted: false });
    // Started after the pruning: page 1 ends before the pruned delete, page 2 follows.
    expect(await mirror('after')).toMatchObject({ pages: 2, upserts: 119, deletes: 0, restarted: false });

    // A second pruning, a mirror started partway: only the one that did not poll in time restarts.
    h.clock.advance(HOUR);
    takeDown('m005');
    await h.sync('incremental');
    expect(await mirror('between')).toMatchObject({ deletes: 1, restarted: false });
    expect(await mirror('second')).toMatchObject({ pages: 2, upserts: 118, deletes: 1, restarted: false });
    h.clock.advance(2 * DAY);
    await h.sync('incremental');
    expect(retainedDeletes(h, 'en')).toEqual([]);
    expect(await mirror('after')).toMatchObject({ restarted: true, upserts: 118 });
    expect(await mirror('between')).toMatchObject({ restarted: false, pages: 1 });
    expect(await mirror('second')).toMatchObject({ restarted: false, pages: 1 });
    expect(await mirror('fresh')).toMatchObject({ restarted: false, pages: 2, upserts: 118 });
  });
});
