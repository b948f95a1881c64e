import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addKey } from '../support/api.js';
import { killApis, spawnApi, type ApiProcess } from '../support/api-process.js';
import { isAlive } from '../support/child-output.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';

/*
 * A WEB_CONCURRENCY cluster restarted on SIGHUP, one process at a time, while partners keep
 * sending requests: the real entry point, real processes, requests on fresh connections (the
 * case that shows refused connections), bounded in count and time.
 */

const dir = tempDir('rolling-');
const dbPath = dir.path('snapshot.db');

beforeAll(() => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber' }), { ...rawSection({ slug: 'fiber' }), locale: 'zh' }],
    articles: [rawArticle({ slug: 'hello', section_slug: 'fiber', published_at: '2026-01-01T00:00:00Z' })],
  });
});
afterEach(() => killApis());
afterAll(() => dir.cleanup());

/** One GET on a new connection: its status, or the connection error's code. */
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

const listeningPids = (api: ApiProcess) =>
  api
    .logs()
    .filter((l) => String(l.msg).startsWith('API listening'))
    .map((l) => l.pid as number);

describe('SIGHUP to a WEB_CONCURRENCY=2 cluster', () => {
  it('replaces every process one at a time with zero refused or failed requests, and logs the old ones as stopped on purpose', async () => {
    const { key } = addKey(dbPath, 'Rolling Partner');
    const cluster = await spawnApi({ DATABASE_PATH: dbPath, WEB_CONCURRENCY: '2', SHUTDOWN_TIMEOUT_MS: '5000' }, { processes: 2, startTimeoutMs: 180_000 });
    const port = Number(new URL(cluster.url).port);
    const before = listeningPids(cluster);
    expect(new Set(before).size).toBe(2);

    const results: Array<number | string> = [];
    let done = false;
    // Three partners, each sending a request every 10 ms or so on a fresh connection: steady
    // traffic through the whole restart, light enough not to starve the new processes' start.
    const loops = Array.from({ length: 3 }, async () => {
      while (!done && results.length < 20_000) {
        results.push(await get(port, '/api/v1/articles', key));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    cluster.child.kill('SIGHUP');
    const restarted = () => cluster.logs().some((l) => l.msg === 'rolling restart done');
    // A process takes a second to start on an idle machine, far longer on a busy shared one.
    await expect.poll(restarted, { timeout: 240_000, interval: 200 }).toBe(true);
    // A little more traffic on the new processes only.
    await new Promise((resolve) => setTimeout(resolve, 300));
    done = true;
    await Promise.all(loops);

    const failed = results.filter((r) => r !== 200);
    expect(failed).toEqual([]);
    expect(results.length).toBeGreaterThan(20);

    const after = listeningPids(cluster).filter((pid) => !before.includes(pid));
    expect(after).toHaveLength(2);
    for (const pid of before) expect(isAlive(pid), `old process ${pid}`).toBe(false);
    for (const pid of after) expect(isAlive(pid), `new process ${pid}`).toBe(true);
    // The new ones answered requests too.
    const answeredBy = new Set(cluster.logs().filter((l) => l.req !== undefined).map((l) => l.pid as number));
    for (const pid of after) expect(answeredBy.has(pid), `new process ${pid} answered`).toBe(true);

    const messages = cluster.logs().map((l) => String(l.msg));
    expect(messages.filter((m) => m === 'an API process stopped after its replacement started (rolling restart)')).toHaveLength(2);
    expect(messages.some((m) => m.startsWith('an API process died'))).toBe(false);
    // One at a time: a new process listens, then an old one stops, then the next pair.
    const STOPPED = 'an API process stopped after its replacement started (rolling restart)';
    const order = cluster
      .logs()
      .filter((l) => String(l.msg).startsWith('API listening') || l.msg === STOPPED)
      .map((l) => (l.msg === STOPPED ? 'down' : 'up'));
    expect(order).toEqual(['up', 'up', 'up', 'down', 'up', 'down']);

    cluster.child.kill('SIGTERM');
    expect((await cluster.exited).code).toBe(0);
  }, 480_000);
});
