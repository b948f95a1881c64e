import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { watchChild, type WatchedChild } from '../support/child-output.js';
import { projectRoot } from '../../src/lib/paths.js';
import { article, section, startFeedHarness, type FeedHarness } from '../support/feed-harness.js';
import { tempDir } from '../support/snapshot-fixture.js';

/*
 * The mirror example (docs/examples/mirror.ts) given bad options or an API that is down, run
 * as a partner runs it: a child process, against a real API on loopback (or a loopback
 * server in front of it that fails first). Every problem is one line; a poller with --every
 * outlives an API that is away and catches up once it is back.
 */

let h: FeedHarness;
const dir = tempDir('mirror-failures-');
const keyFile = dir.path('key.txt');
const children: ChildProcess[] = [];
let front: Server | undefined;

beforeAll(async () => {
  h = await startFeedHarness();
  h.clock.set(Date.now());
  h.cms.store.upsertSection('en', section('news'));
  for (let i = 0; i < 3; i++) h.cms.store.upsertArticle(article(`f${i}`, { updated_at: h.nowIso(), published_at: '2026-01-01T00:00:00Z' }));
  await h.sync('full');
  writeFileSync(keyFile, `${h.key}\n`);
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await new Promise((resolve) => (front ? front.close(resolve) : resolve(undefined)));
  front = undefined;
});
afterAll(async () => {
  await h?.close();
  dir.cleanup();
});

interface Run extends WatchedChild {
  child: ChildProcess;
}

function runMirror(args: string[]): Run {
  const child = spawn(process.execPath, [join(projectRoot(), 'dist/docs/examples/mirror.js'), ...args], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return { child, ...watchChild(child) };
}

const lines = (text: string) => text.trim().split('\n');

/** A loopback address where nothing listens: a port that was just free. */
async function closedAddress(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

describe('the mirror example, given bad options', () => {
  it.each([
    ['--every abc', ['--every', 'abc'], "option '--every <seconds>' argument 'abc' is invalid. It needs a whole number of seconds from 1"],
    ['--every 0', ['--every', '0'], "option '--every <seconds>' argument '0' is invalid. It needs a whole number of seconds from 1"],
    // A fraction would poll in a near-tight loop.
    ['--every 0.001', ['--every', '0.001'], "option '--every <seconds>' argument '0.001' is invalid. It needs a whole number"],
    ['--every -5', ['--every', '-5'], "option '--every <seconds>' argument '-5' is invalid."],
  ])('refuses %s with one line and exit 1, before polling', async (_name, extra, message) => {
    const state = dir.path('every.json');
    const run = runMirror(['--api', h.api.url, '--key-file', keyFile, '--state', state, ...extra]);
    expect(await run.exit(10_000), run.out()).toBe(1);
    expect(lines(run.err())).toEqual([expect.stringContaining(message)]);
    expect(run.out()).toBe('');
    expect(existsSync(state)).toBe(false);
  });

  it('refuses an --api that is not an http address with one line', async () => {
    const run = runMirror(['--api', 'localhost-3000', '--key-file', keyFile, '--state', dir.path('api.json')]);
    expect(await run.exit(10_000)).toBe(1);
    expect(lines(run.err())).toEqual([expect.stringContaining("option '--api <url>' argument 'localhost-3000' is invalid")]);
  });

  it('prints its usage on --help and exits 0', async () => {
    const run = runMirror(['--help']);
    expect(await run.exit(10_000)).toBe(0);
    expect(run.out()).toContain('--every <seconds>');
    expect(run.err()).toBe('');
  });

  it('says in one line that the key file is missing', async () => {
    const missing = dir.path('no-such-key.txt');
    const run = runMirror(['--api', h.api.url, '--key-file', missing, '--state', dir.path('key.json')]);
    expect(await run.exit(10_000)).toBe(1);
    expect(lines(run.err())).toEqual([`cannot read the key file ${missing} (ENOENT): --key-file names the file holding your API key`]);
  });
});

describe('the mirror example, with the API away', () => {
  it('polling once, exits 1 with one line naming the address and the cause', async () => {
    const api = await closedAddress();
    const state = dir.path('once.json');
    const run = runMirror(['--api', api, '--key-file', keyFile, '--state', state]);
    expect(await run.exit(10_000)).toBe(1);
    expect(lines(run.err())).toEqual([`cannot reach the API at ${api}: connect ECONNREFUSED ${api.slice('http://'.length)}`]);
    expect(existsSync(state)).toBe(false);
  });

  it('with --every, logs each failed poll in one line, keeps polling and catches up once the API answers', async () => {
    // In front of the API: the first connection is cut, the next answers 503, then it relays.
    let requests = 0;
    front = createServer((req: IncomingMessage, res: ServerResponse) => {
      requests += 1;
      if (requests === 1) return void req.socket.destroy();
      if (requests === 2) {
        res.writeHead(503, { 'Content-Type': 'application/json' });
        return void res.end(JSON.stringify({ error: { code: 'unavailable', message: 'the snapshot is not ready' } }));
      }
      const headers: Record<string, string> = { 'X-API-Key': String(req.headers['x-api-key']) };
      if (req.headers['if-none-match']) headers['If-None-Match'] = String(req.headers['if-none-match']);
      void fetch(`${h.api.url}${req.url}`, { headers }).then(async (answer) => {
        const etag = answer.headers.get('etag');
        res.writeHead(answer.status, { 'Content-Type': 'application/json', ...(etag ? { ETag: etag } : {}) });
        res.end(await answer.text());
      });
    });
    await new Promise<void>((resolve) => front!.listen(0, '127.0.0.1', resolve));
    const api = `http://127.0.0.1:${(front.address() as { port: number }).port}`;
    const state = dir.path('every-away.json');

    const run = runMirror(['--api', api, '--key-file', keyFile, '--state', state, '--every', '1']);
    while (!run.out().includes('\n')) {
      if (run.child.exitCode !== null) throw new Error(`the mirror exited ${run.child.exitCode}: ${run.err()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }

    expect(lines(run.err())).toEqual([
      expect.stringMatching(new RegExp(`^cannot reach the API at ${api}: .+; polling again in 1 s$`)),
      `the API at ${api} answered 503: the snapshot is not ready; polling again in 1 s`,
    ]);
    expect(JSON.parse(lines(run.out())[0]!)).toMatchObject({ upserts: 3, articles: 3 });
    const copy = JSON.parse(readFileSync(state, 'utf8')) as { articles: Record<string, unknown> };
    expect(copy.articles).toEqual(Object.fromEntries(await h.catalogue('en')));
    expect(run.child.exitCode).toBeNull();
  }, 30_000);

  it('with --every, stops with one line naming the address when the API refuses the key', async () => {
    const wrongKey = dir.path('wrong-key.txt');
    writeFileSync(wrongKey, 'lsk_00000000000000000000000000000000\n');
    const run = runMirror(['--api', h.api.url, '--key-file', wrongKey, '--state', dir.path('refused.json'), '--every', '1']);
    expect(await run.exit(10_000)).toBe(1);
    expect(lines(run.err())).toEqual([expect.stringMatching(new RegExp(`^the API at ${h.api.url} answered 401: `))]);
  });
});
