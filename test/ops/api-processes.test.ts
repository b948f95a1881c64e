import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { revokeKey } from '../../src/keys/manage.js';
import { runNode, SERVER_PATH } from '../support/run-node.js';
import { addKey, keysPathFor, withKeys } from '../support/api.js';
import { killApis, spawnApi, type ApiProcess } from '../support/api-process.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { keepAliveClient } from '../support/keep-alive-client.js';
import { scrape } from '../support/prometheus.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { isAlive } from '../support/child-output.js';

/*
 * The real API entry point: SIGTERM under keep-alive load, several processes on one port
 * (WEB_CONCURRENCY), and two separate processes over one snapshot and keys database (two
 * hosts in miniature).
 */

const dir = tempDir();
const dbPath = dir.path('snapshot.db');

beforeAll(() => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber' }), { ...rawSection({ slug: 'fiber' }), locale: 'zh' }],
    articles: [rawArticle({ slug: 'hello', section_slug: 'fiber', published_at: '2026-01-01T00:00:00Z' })],
  });
});
afterEach(() => killApis());
afterAll(() => dir.cleanup());

const portOf = (api: ApiProcess) => Number(new URL(api.url).port);

function revoke(id: number): void {
  withKeys(dbPath, (db) => revokeKey(db, id, Date.now));
}

/** One request on a fresh connection, so node:cluster hands each to the next process. */
async function once(api: ApiProcess, path: string, key?: string) {
  const client = await keepAliveClient(portOf(api));
  try {
    return await client.get(path, { Connection: 'close', ...(key ? { 'X-API-Key': key } : {}) });
  } finally {
    client.socket.destroy();
  }
}

/** Which process (pid) answered each logged request, with its status. */
function answeredBy(api: ApiProcess, keyId: number): Array<{ pid: number; status: number }> {
  return api
    .logs()
    .filter((l) => l.keyId === keyId)
    .map((l) => ({ pid: l.pid as number, status: (l.res as { status: number }).status }));
}

describe('at start, before any request', () => {
  it('builds its views of both locales, and its search threads build theirs and rehearse, before it listens', async () => {
    const api = await spawnApi({ DATABASE_PATH: dbPath, LOG_LEVEL: 'debug', SEARCH_WORKERS: '2' });
    const logs = api.logs();
    const messages = logs.map((l) => String(l.msg));
    // The API's own views and the threads' start: done before the port opened, so that no
    // partner's first search waits for them.
    const listening = messages.findIndex((m) => m.startsWith('API listening'));
    const views = messages.flatMap((m, i) => (m.startsWith('built the view of') ? [i] : []));
    expect(views).toHaveLength(2);
    expect(views.every((i) => i < listening)).toBe(true);
    const before = logs.slice(0, listening);
    const threadViews = before
      .filter((l) => typeof l.msg === 'string' && l.msg.startsWith('search thread built its view'))
      .map((l) => `${l.thread as number}:${l.locale as string}`)
      .sort();
    expect(threadViews).toEqual(['0:en', '0:zh', '1:en', '1:zh']);
    const rehearsed = before.filter((l) => l.msg === 'search thread rehearsed common queries').map((l) => l.thread as number);
    expect(rehearsed.sort()).toEqual([0, 1]);
    // Its own search responses: rehearsed over several rounds, then once more after the start's
    // full collection (the work first done after one was the slower for it).
    const responses = before.filter((l) => l.msg === 'rehearsed search responses').map((l) => l.rounds as number);
    expect(responses).toHaveLength(2);
    expect(responses[0]).toBeGreaterThan(1);
    expect(responses[1]).toBe(1);
    expect(api.logs().some((l) => l.req !== undefined)).toBe(false);
  });
});

describe('SIGTERM under keep-alive load', () => {
  it('answers every request, closes every connection cleanly (no reset) and exits 0', async () => {
    const { key } = addKey(dbPath, 'Load Partner');
    const api = await spawnApi({ DATABASE_PATH: dbPath, SHUTDOWN_TIMEOUT_MS: '15000' });
    const port = portOf(api);
    const busy = await Promise.all(Array.from({ length: 4 }, () => keepAliveClient(port)));
    const idle = await Promise.all(Array.from({ length: 2 }, () => keepAliveClient(port)));
    for (const client of idle) expect((await client.get('/health')).headers.connection).toBe('keep-alive');

    let sent = 0;
    let signalled = false;
    const loops = busy.map(async (client) => {
      const statuses: number[] = [];
      for (;;) {
        const res = await client.get('/api/v1/articles', { 'X-API-Key': key });
        statuses.push(res.status);
        sent += 1;
        if (sent >= 80 && !signalled) {
          signalled = true;
          api.child.kill('SIGTERM');
        }
        if (res.headers.connection === 'close') break;
      }
      return { statuses, closed: await client.closed };
    });

    const results = await Promise.all(loops);
    for (const { statuses, closed } of results) {
      expect(new Set(statuses)).toEqual(new Set([200]));
      expect(closed).toBe('end');
    }
    for (const client of idle) expect(await client.closed).toBe('end');
    const { code } = await api.exited;
    expect(code).toBe(0);
    expect(api.logs().some((l) => l.msg === 'stopped')).toBe(true);
  });
});

describe('several API processes on one port (WEB_CONCURRENCY=2)', () => {
  it('refuses a revoked key on the next request in every process, sums their metrics, and stops them all on SIGTERM', async () => {
    const { id, key } = addKey(dbPath, 'Cluster Partner');
    const api = await spawnApi({ DATABASE_PATH: dbPath, WEB_CONCURRENCY: '2', METRICS_PORT: '0' }, { processes: 2 });
    const workers = [...new Set(api.logs().filter((l) => l.msg?.toString().startsWith('API listening')).map((l) => l.pid as number))];
    expect(workers).toHaveLength(2);

    for (let i = 0; i < 6; i++) expect((await once(api, '/api/v1/articles', key)).status).toBe(200);
    await expect.poll(() => new Set(answeredBy(api, id).map((a) => a.pid)).size, { timeout: 10_000 }).toBe(2);

    revoke(id);
    for (let i = 0; i < 6; i++) {
      const res = await once(api, '/api/v1/articles', key);
      expect(res.status).toBe(401);
      expect(JSON.parse(res.body).error.code).toBe('revoked_api_key');
    }
    // Both processes refused it (the request log names the process).
    await expect.poll(() => new Set(api.logs().filter((l) => (l.res as { status?: number })?.status === 401).map((l) => l.pid)).size, { timeout: 10_000 }).toBe(2);

    const m = await scrape(api.metricsUrl!);
    expect(m.value('syndication_http_requests_total', { route: '/api/v1/articles', status: '200' })).toBe(6);
    expect(m.value('syndication_http_requests_total', { route: '/api/v1/articles', status: '401' })).toBe(6);
    expect(m.value('syndication_key_refusals_total', { reason: 'revoked_api_key' })).toBe(6);

    api.child.kill('SIGTERM');
    expect((await api.exited).code).toBe(0);
    for (const pid of workers) expect(isAlive(pid)).toBe(false);
  });
});

describe('the cluster primary', () => {
  it('replaces an API process that dies, and keeps serving on the same port', async () => {
    const { key } = addKey(dbPath, 'Resilient Partner');
    const api = await spawnApi({ DATABASE_PATH: dbPath, WEB_CONCURRENCY: '2' }, { processes: 2 });
    const listening = () => api.logs().filter((l) => l.msg?.toString().startsWith('API listening')).map((l) => l.pid as number);
    const [first] = listening();
    process.kill(first!, 'SIGKILL');
    await expect.poll(() => listening().length, { timeout: 15_000 }).toBe(3);
    // Named apart from the line's own `pid` (the primary's): a repeated JSON key keeps one.
    expect(api.logs().filter((l) => l.msg === 'an API process died: starting another')).toEqual([
      expect.objectContaining({ level: 50, deadPid: first, signal: 'SIGKILL', pid: api.child.pid }),
    ]);
    for (let i = 0; i < 4; i++) expect((await once(api, '/api/v1/articles', key)).status).toBe(200);
  });

  it('exits 1 with the reason when its processes cannot listen, instead of forking forever', async () => {
    const taken = await spawnApi({ DATABASE_PATH: dbPath });
    const port = new URL(taken.url).port;
    const result = await runNode([SERVER_PATH], { DATABASE_PATH: dbPath, HOST: '127.0.0.1', PORT: port, WEB_CONCURRENCY: '2' }, { timeoutMs: 20_000 });
    expect(result.timedOut).toBe(false);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`port ${port} is already in use`);
    expect(result.stderr).toContain('An API process failed to start');
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });
});

describe('two API processes over one snapshot and keys database (two hosts in miniature)', () => {
  it('serves a key on both and refuses it on both right after its revocation', async () => {
    const { id, key } = addKey(dbPath, 'Two Hosts Partner');
    const [a, b] = await Promise.all([spawnApi({ DATABASE_PATH: dbPath }), spawnApi({ DATABASE_PATH: dbPath })]);
    expect(a!.url).not.toBe(b!.url);
    for (const api of [a!, b!]) expect((await once(api, '/api/v1/articles', key)).status).toBe(200);
    revoke(id);
    for (const api of [a!, b!]) {
      const res = await once(api, '/api/v1/articles', key);
      expect(res.status).toBe(401);
      expect(JSON.parse(res.body).error.code).toBe('revoked_api_key');
    }
  });
});

describe('two hosts, each with its own snapshot, sharing one keys database', () => {
  it('serves a key on both hosts and refuses it on both right after one revocation', async () => {
    // Host B's snapshot is built on its own (its own worker in production), in another folder,
    // so its default keys path would differ: both point KEYS_DATABASE_PATH at host A's file.
    const other = tempDir();
    try {
      const otherDb = other.path('snapshot.db');
      buildSnapshot(otherDb, {
        sections: [rawSection({ slug: 'fiber' }), { ...rawSection({ slug: 'fiber' }), locale: 'zh' }],
        articles: [rawArticle({ slug: 'hello', section_slug: 'fiber', published_at: '2026-01-01T00:00:00Z' })],
      });
      const keysPath = keysPathFor(dbPath);
      const { id, key } = addKey(dbPath, 'Shared Keys Partner');
      const [a, b] = await Promise.all([
        spawnApi({ DATABASE_PATH: dbPath, KEYS_DATABASE_PATH: keysPath }),
        spawnApi({ DATABASE_PATH: otherDb, KEYS_DATABASE_PATH: keysPath }),
      ]);
      for (const api of [a!, b!]) expect((await once(api, '/api/v1/articles/hello', key)).status).toBe(200);
      revoke(id);
      for (const api of [a!, b!]) {
        const res = await once(api, '/api/v1/articles/hello', key);
        expect(res.status).toBe(401);
        expect(JSON.parse(res.body).error.code).toBe('revoked_api_key');
      }
    } finally {
      other.cleanup();
    }
  });
});
