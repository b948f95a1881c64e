import { request, Agent } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../support/api.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';

/*
 * A flood of connections that do nothing, on loopback: idle keep-alive connections (answered
 * once, then held open) and slow-header ones (part of a request, then silence) filling
 * HTTP_MAX_CONNECTIONS. A new client must still get in: the server closes an idle one, then the
 * oldest silent one, to make room. Bounded: 60 sockets, a few seconds.
 */

const CAP = 40;
const dir = tempDir('connection-flood-');
let api: TestApi;
let port: number;
const held: Socket[] = [];

beforeAll(async () => {
  const path = dir.path('snapshot.db');
  buildSnapshot(path, { sections: [rawSection({ slug: 'fiber' })], articles: [rawArticle({ slug: 'hello', section_slug: 'fiber' })] });
  // Timeouts far longer than the test: only making room can let the new client in.
  api = await startApi({
    databasePath: path,
    logLevel: 'warn',
    serverLimits: { headersTimeoutMs: 60_000, requestTimeoutMs: 120_000, keepAliveTimeoutMs: 60_000, maxConnections: CAP },
  });
  port = Number(new URL(api.url).port);
});

afterAll(async () => {
  for (const socket of held) socket.destroy();
  await api.close();
  dir.cleanup();
});

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', () => undefined);
    socket.once('error', reject);
    held.push(socket);
  });
}

/** A keep-alive connection that got one answer and now sits idle. */
async function idleKeepAlive(): Promise<Socket> {
  const socket = await open();
  const answered = new Promise<void>((resolve) => socket.once('data', () => resolve()));
  socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  await answered;
  return socket;
}

/** A slow-header connection: the start of a request, then nothing. */
async function slowHeaders(): Promise<Socket> {
  const socket = await open();
  socket.write('GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ');
  return socket;
}

/** A new client on a new connection: its status, or the error it met. */
function newClient(): Promise<{ status?: number; error?: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', agent: new Agent({ keepAlive: false }), timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message, ms: performance.now() - started }));
    req.end();
  });
}

describe('a connection flood at HTTP_MAX_CONNECTIONS', () => {
  it('still lets new clients in: idle keep-alive connections are closed first, then the oldest silent ones', async () => {
    const idle: Socket[] = [];
    for (let i = 0; i < CAP / 2; i++) idle.push(await idleKeepAlive());
    const slow: Socket[] = [];
    for (let i = 0; i < CAP / 2; i++) slow.push(await slowHeaders());
    // Twenty more silent connections past the cap: each takes the place of another.
    for (let i = 0; i < 20; i++) await open();
    await delay(100);

    const results = [];
    for (let i = 0; i < 5; i++) results.push(await newClient());
    for (const result of results) expect(result, JSON.stringify(result)).toMatchObject({ status: 200 });
    console.info(`new clients at the cap served in ${results.map((r) => Math.round(r.ms)).join(', ')} ms`);

    // The idle keep-alive connections went first (the 20 extra silent ones and 5 clients took 25
    // places: all 20 idle ones, then 5 of the oldest slow-header ones).
    expect(idle.every((s) => s.destroyed || s.readableEnded)).toBe(true);
    expect(slow.filter((s) => !(s.destroyed || s.readableEnded)).length).toBeLessThan(CAP / 2);
  });
});
