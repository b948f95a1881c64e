import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { waitFor } from '../support/worker.js';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/paths.js';
import { tempDir } from '../support/snapshot-fixture.js';

/*
 * `npm run demo` as a new user runs it: one command, then the printed curl commands work.
 * The demo is started exactly as the script does (the built entry point), on a free port and
 * with its snapshot in a temporary folder.
 */

const dir = tempDir('demo-test-');
let demo: ChildProcess | undefined;
let base: string | undefined;

afterAll(async () => {
  if (demo && demo.exitCode === null) {
    demo.kill('SIGKILL');
    await new Promise((resolve) => demo!.once('exit', resolve));
  }
  dir.cleanup();
});

function startDemo(): Promise<{ ready: string }> {
  demo = spawn(process.execPath, [join(projectRoot(), 'dist/src/demo/main.js')], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', DEMO_DATABASE_PATH: dir.path('demo.db') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  demo.stderr!.on('data', (d: Buffer) => (err += d));
  return new Promise((resolve, reject) => {
    demo!.stdout!.on('data', (d: Buffer) => {
      out += d;
      if (out.includes('Press Ctrl-C to stop.')) resolve({ ready: out });
    });
    demo!.once('exit', (code) => reject(new Error(`demo exited ${code}: ${err}`)));
  });
}

describe('npm run demo', () => {
  it('syncs the sample CMS, creates a key and serves the API, as the printed curl commands show', async () => {
    const { ready } = await startDemo();
    const curl = /curl -H 'X-API-Key: (lsk_[0-9A-Za-z]{32})' '(http:\/\/127\.0\.0\.1:\d+)\/api\/v1\/articles\?locale=en&limit=2'/.exec(ready);
    expect(curl, ready).not.toBeNull();
    const key = curl![1]!;
    base = curl![2]!;
    const headers = { 'X-API-Key': key };

    const list = await fetch(`${base}/api/v1/articles?locale=en&limit=2`, { headers });
    expect(list.status).toBe(200);
    const body = (await list.json()) as { data: { title: string }[]; meta: { total: number } };
    expect(body.data).toHaveLength(2);
    expect(body.meta.total).toBeGreaterThanOrEqual(60);

    const zh = (await (await fetch(`${base}/api/v1/categories?locale=zh`, { headers })).json()) as {
      data: { slug: string; name: string }[];
    };
    expect(zh.data.length).toBeGreaterThanOrEqual(6);
    expect(zh.data.map((s) => s.slug)).not.toContain('events');

    // The API starts its search threads as it listens; a search before they are ready is
    // refused fast (503 search_busy, with Retry-After), as a partner would retry it.
    const searchUrl = `${base}/api/v1/search?locale=zh&q=${encodeURIComponent('激光')}`;
    const answered = await waitFor(async () => {
      const res = await fetch(searchUrl, { headers });
      return res.status === 200 && res;
    }, { timeoutMs: 20_000, intervalMs: 200, what: 'a first search answered' });
    const search = (await answered.json()) as { meta: { total: number } };
    expect(search.meta.total).toBeGreaterThan(10);
    expect((await fetch(`${base}/health`)).status).toBe(200);
    expect(ready).toContain(`${base}/docs`);
    expect((await fetch(`${base}/docs`)).status).toBe(200);
  }, 60_000);

  it('stops the API and the worker on Ctrl-C and exits 0', async () => {
    expect(base, 'the first test started the demo').toBeDefined();
    const exit = new Promise<number | null>((resolve) => demo!.once('exit', resolve));
    demo!.kill('SIGINT');
    expect(await exit).toBe(0);
    await expect(fetch(`${base}/health`)).rejects.toThrow();
  }, 30_000);
});
