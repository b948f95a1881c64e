import { connect, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadApiConfig } from '../../../src/config/api.js';
import { addKey, startApi, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { expectNoLeak } from '../../support/contract-helpers.js';

/*
 * What Node's own HTTP layer does before a request reaches the app, tested from raw sockets:
 * the limits that cut slow and idle clients, and JSON answers for requests it cannot parse.
 */

const dir = tempDir();
const dbPath = dir.path('snapshot.db');
let api: TestApi;
let port: number;
let key: string;

beforeAll(async () => {
  buildSnapshot(dbPath, { sections: [rawSection({ slug: 'fiber' })], articles: [rawArticle({ slug: 'hello', section_slug: 'fiber' })] });
  key = addKey(dbPath).key;
  api = await startApi({
    databasePath: dbPath,
    serverLimits: { headersTimeoutMs: 1_000, requestTimeoutMs: 2_000, keepAliveTimeoutMs: 500, maxConnections: 8 },
  });
  port = Number(new URL(api.url).port);
});

afterAll(async () => {
  await api.close();
  dir.cleanup();
});

interface RawExchange {
  text: string;
  /** The server ended the connection (as opposed to the test giving up). */
  closedByServer: boolean;
}

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
  });
}

/** Writes `chunks` (pausing `gapMs` between them) and reads until the server closes or `giveUpMs`. */
async function exchange(chunks: Array<string | Buffer>, options: { gapMs?: number; giveUpMs?: number } = {}): Promise<RawExchange> {
  const socket = await open();
  let text = '';
  let closedByServer = false;
  socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
  const closed = new Promise<void>((resolve) => {
    socket.on('close', () => resolve());
    socket.on('end', () => {
      closedByServer = true;
    });
  });
  socket.on('error', () => undefined);
  for (const chunk of chunks) {
    if (socket.destroyed || closedByServer) break;
    socket.write(chunk);
    if (options.gapMs) await delay(options.gapMs);
  }
  const giveUp = delay(options.giveUpMs ?? 5_000).then(() => socket.destroy());
  await Promise.race([closed, giveUp]);
  socket.destroy();
  return { text, closedByServer };
}

function parseResponse(text: string): { status: number; headers: Record<string, string>; body: unknown } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: body ? JSON.parse(body) : undefined };
}

function expectJsonError(text: string, status: number, code: string): void {
  const res = parseResponse(text);
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.body).toEqual({ error: { code, message: expect.stringMatching(/^[A-Z].+\.$/) } });
  expectNoLeak(JSON.stringify(res.body));
}

describe('requests Node cannot parse get JSON errors', () => {
  it('answers oversized headers with 431 headers_too_large, and logs neither the headers nor the key', async () => {
    const big = `X-Padding: ${'a'.repeat(20_000)}\r\n`;
    const { text } = await exchange([`GET /api/v1/articles HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\n${big}\r\n`]);
    expectJsonError(text, 431, 'headers_too_large');
    expect(api.logs.join('\n')).not.toContain(key);
    expect(api.logs.join('\n')).not.toContain('aaaaaaaaaa');
  });

  it('answers HEAD with oversized headers with the 431 head and no body', async () => {
    const { text } = await exchange([`HEAD /api/v1/articles HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`]);
    const [head, body] = text.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 431 /);
    expect(head).toMatch(/\r\nCache-Control: no-store\r\n/i);
    expect(body).toBe('');
  });

  it.each([
    ['a control character in a header value', 'GET /api/v1/articles HTTP/1.1\r\nHost: x\r\nX-API-Key: a\u0001b\r\n\r\n'],
    ['a space in a header name', 'GET /api/v1/articles HTTP/1.1\r\nHost: x\r\nX Bad: 1\r\n\r\n'],
    ['a garbage request line', 'HELLO\r\n\r\n'],
    ['an unknown method', 'FROBNICATE /api/v1/articles HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a space in the path', 'GET /api/v1/art icles HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a bad HTTP version', 'GET /api/v1/articles HTTP/9.9\r\nHost: x\r\n\r\n'],
    ['a bad chunked body', 'GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n'],
    ['both Content-Length and chunked', 'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['a bare LF line ending in the head', 'GET / HTTP/1.1\nHost: x\n\n'],
    ['a NUL byte in the path', 'GET /api/v1/\u0000 HTTP/1.1\r\nHost: x\r\n\r\n'],
  ])('answers %s with 400 invalid_request', async (_what, request) => {
    const { text } = await exchange([Buffer.from(request, 'latin1')]);
    // Node is lenient about some of these and parses them: then the app answers, also in JSON.
    const res = parseResponse(text);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
    expectNoLeak(JSON.stringify(res.body));
  });

  it('answers a malformed request line with 400 invalid_request exactly', async () => {
    const { text } = await exchange(['HELLO\r\n\r\n']);
    expectJsonError(text, 400, 'invalid_request');
  });

  it('answers an HTTP/1.1 request without Host with 400 invalid_request', async () => {
    const { text } = await exchange([`GET /api/v1/articles HTTP/1.1\r\nX-API-Key: ${key}\r\n\r\n`]);
    expectJsonError(text, 400, 'invalid_request');
  });

  it('answers an unsupported Expect with 417 in JSON', async () => {
    const { text } = await exchange([`GET /api/v1/articles HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n`]);
    expectJsonError(text, 417, 'expectation_failed');
  });

  it('answers CONNECT with 405 in JSON instead of dropping the connection', async () => {
    const { text } = await exchange(['CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n']);
    expectJsonError(text, 405, 'method_not_allowed');
    expect(parseResponse(text).headers.allow).toBe('GET, HEAD');
  });
});

describe('slow and idle clients', () => {
  it('cuts a client sending its headers one byte at a time with 408 request_timeout', async () => {
    const request = `GET /api/v1/articles HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nX-Slow: ${'s'.repeat(200)}\r\n\r\n`;
    // About 25 s of trickling if the server let it; headersTimeout is 1 s in this server.
    const { text, closedByServer } = await exchange([...request], { gapMs: 100, giveUpMs: 10_000 });
    expect(closedByServer).toBe(true);
    expectJsonError(text, 408, 'request_timeout');
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const { text, closedByServer } = await exchange([`GET /api/v1/articles HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\n\r\n`], {
      giveUpMs: 10_000,
    });
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(closedByServer).toBe(true);
  });

  it('at the cap, closes the oldest silent connection to let a new one in, and keeps serving the others', async () => {
    const held = await Promise.all(Array.from({ length: 8 }, () => open()));
    for (const socket of held) socket.on('error', () => undefined);
    try {
      // Give the server time to count the eight before the ninth arrives.
      await delay(100);
      const served = await exchange([`GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`], { giveUpMs: 5_000 });
      expect(served.text).toMatch(/^HTTP\/1\.1 (200|503) /);
      // One of the eight (the oldest, as far as the server saw them arrive) made room.
      await delay(100);
      expect(held.filter((s) => s.destroyed || s.readableEnded).length).toBe(1);
      const other = held.find((s) => !(s.destroyed || s.readableEnded))!;
      const answer = new Promise<string>((resolve) => other.once('data', (d: Buffer) => resolve(d.toString())));
      other.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await answer).toMatch(/^HTTP\/1\.1 (200|503) /);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
});

describe('server limits configuration', () => {
  it('has defaults that cut slow clients well before Node’s own (60 s headers, 300 s request)', () => {
    expect(loadApiConfig({}).serverLimits).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 1_000,
    });
  });

  it('reads each limit from its variable', () => {
    const limits = loadApiConfig({
      HTTP_HEADERS_TIMEOUT_MS: '2000',
      HTTP_REQUEST_TIMEOUT_MS: '4000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '65000',
      HTTP_MAX_CONNECTIONS: '50',
    }).serverLimits;
    expect(limits).toEqual({ headersTimeoutMs: 2_000, requestTimeoutMs: 4_000, keepAliveTimeoutMs: 65_000, maxConnections: 50 });
  });

  it.each([
    [{ HTTP_HEADERS_TIMEOUT_MS: 'soon' }, /HTTP_HEADERS_TIMEOUT_MS must be a whole number/],
    [{ HTTP_MAX_CONNECTIONS: '0' }, /HTTP_MAX_CONNECTIONS must be a whole number from 1/],
    [{ HTTP_HEADERS_TIMEOUT_MS: '40000', HTTP_REQUEST_TIMEOUT_MS: '30000' }, /HTTP_HEADERS_TIMEOUT_MS must not be greater than HTTP_REQUEST_TIMEOUT_MS/],
  ])('refuses %j with a message naming the variable', (env, message) => {
    expect(() => loadApiConfig(env)).toThrow(message);
  });
});
