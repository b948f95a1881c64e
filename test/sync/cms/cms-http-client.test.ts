import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { closeServer, startCmsServer } from '../../../src/demo/cms-server.js';
import { CmsStore } from '../../../src/demo/cms-store.js';
import { CmsError } from '../../../sync/cms/errors.js';
import { createCmsHttpClient, parseRetryAfter, type CmsHttpClientOptions } from '../../../sync/cms/http-client.js';
import { rawArticle } from '../../support/cms-fixtures.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';

const PAGE = '/articles?locale=en&page=1&per_page=10';
const TOKEN = 'sekret-cms-token-4711';

let cms: TestCms;
let logLines: string[];

beforeEach(async () => {
  cms = await startTestCms({ token: TOKEN });
  cms.store.upsertArticles([rawArticle({ id: 'art-a' }), rawArticle({ id: 'art-b' })]);
  logLines = [];
});

afterEach(async () => {
  await cms.close();
});

/** A client with tiny delays whose waits are recorded instead of slept. */
function client(overrides: Partial<CmsHttpClientOptions> = {}) {
  const waits: number[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void logLines.push(line) } });
  const http = createCmsHttpClient({
    baseUrl: cms.url,
    token: TOKEN,
    timeoutMs: 2000,
    maxAttempts: 4,
    retryBudgetMs: 10_000,
    baseDelayMs: 1,
    maxDelayMs: 5,
    maxResponseBytes: 1_000_000,
    logger,
    random: () => 1,
    sleep: async (ms) => void waits.push(ms),
    ...overrides,
  });
  return { http, waits };
}

async function failure(promise: Promise<unknown>): Promise<CmsError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CmsError);
  return error as CmsError;
}

async function startServer(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('CMS HTTP client: requests', () => {
  it('returns the parsed JSON of a page and sends the bearer token', async () => {
    const body = (await client().http.getJson(PAGE)) as { data: Array<{ id: string }> };
    expect(body.data.map((a) => a.id)).toEqual(['art-a', 'art-b']);
    expect(cms.requests).toEqual([{ method: 'GET', path: PAGE, hasAuthorization: true }]);
  });

  it('sends Accept: application/json and the exact bearer header', async () => {
    const seen: Array<Record<string, string | string[] | undefined>> = [];
    const server = await startCmsServer({
      store: new CmsStore(),
      token: TOKEN,
      hooks: { intercept: (req) => (seen.push(req.headers), false) },
    });
    try {
      await client({ baseUrl: server.url }).http.getJson('/sections?locale=en');
      expect(seen[0]?.accept).toBe('application/json');
      expect(seen[0]?.authorization).toBe(`Bearer ${TOKEN}`);
    } finally {
      await server.close();
    }
  });

  it('resolves paths under the path prefix of the base URL', async () => {
    const prefixed = await startTestCms({ basePath: '/export' });
    try {
      const body = await client({ baseUrl: `${prefixed.url}/` }).http.getJson('/sections?locale=en');
      expect(body).toEqual({ data: [] });
      expect(prefixed.requests[0]?.path).toBe('/export/sections?locale=en');
    } finally {
      await prefixed.close();
    }
  });
});

describe('CMS HTTP client: retries', () => {
  it('retries a 503 and succeeds on the next attempt', async () => {
    cms.failNext(1, { status: 503 });
    const { http, waits } = client();
    await expect(http.getJson(PAGE)).resolves.toMatchObject({ meta: { total: 2 } });
    expect(cms.requests).toHaveLength(2);
    expect(waits).toEqual([1]);
    const warn = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.level === 40);
    expect(warn).toMatchObject({ attempt: 1, waitMs: 1, kind: 'http_status', request: `GET ${PAGE}` });
  });

  it('waits with full jitter under an exponential cap', async () => {
    cms.failNext(3, { status: 500 });
    const { http, waits } = client({ random: () => 0.5, baseDelayMs: 10, maxDelayMs: 25 });
    await http.getJson(PAGE);
    expect(waits).toEqual([5, 10, 12.5]);
  });

  it('honours Retry-After in seconds on a 429', async () => {
    cms.failNext(1, { status: 429, retryAfter: 2 });
    const { http, waits } = client();
    await http.getJson(PAGE);
    expect(waits).toEqual([2000]);
  });

  it('honours Retry-After as an HTTP date on a 503', async () => {
    const now = Date.UTC(2026, 9, 20, 8, 0, 0);
    cms.failNext(1, { status: 503, retryAfter: new Date(now + 3000).toUTCString() });
    const { http, waits } = client({ now: () => now });
    await http.getJson(PAGE);
    expect(waits).toEqual([3000]);
  });

  it('honours Retry-After on every retried status, a 502 too', async () => {
    cms.failNext(1, { status: 502, retryAfter: 2 });
    const { http, waits } = client();
    await http.getJson(PAGE);
    expect(waits).toEqual([2000]);
  });

  it('fails at once with the last reason when the next wait would pass the retry budget', async () => {
    cms.failNext(1, { status: 503, retryAfter: 30 });
    const { http, waits } = client({ retryBudgetMs: 5000 });
    const error = await failure(http.getJson(PAGE));
    expect(error.kind).toBe('http_status');
    expect(error.status).toBe(503);
    expect(error.retryable).toBe(true);
    expect(waits).toEqual([]);
    expect(cms.requests).toHaveLength(1);
  });

  it('counts the time already spent against the retry budget', async () => {
    let clock = 0;
    cms.failNext(10, { status: 502 });
    const { http, waits } = client({
      baseDelayMs: 100,
      maxDelayMs: 10_000,
      retryBudgetMs: 350,
      now: () => clock,
      sleep: async (ms) => {
        waits.push(ms);
        clock += ms;
      },
    });
    const error = await failure(http.getJson(PAGE));
    // 100 + 200 fit in 350; the next 400 would not.
    expect(waits).toEqual([100, 200]);
    expect(error.attempts).toBe(3);
    expect(error.message).toContain('HTTP 502');
  });

  it('stops after maxAttempts', async () => {
    cms.failNext(10, { status: 500 });
    const error = await failure(client({ maxAttempts: 3 }).http.getJson(PAGE));
    expect(cms.requests).toHaveLength(3);
    expect(error.attempts).toBe(3);
    expect(error.message).toMatch(/^CMS error response: GET \/articles\?locale=en&page=1&per_page=10: HTTP 500 .*\(3 attempts\)$/);
  });

  it('does not retry a 4xx other than 429 and reports the CMS message', async () => {
    const error = await failure(client().http.getJson('/articles?locale=en&page=1&per_page=500'));
    expect(error).toMatchObject({ kind: 'http_status', status: 400, retryable: false, attempts: 1 });
    expect(error.message).toContain('per_page must be an integer from 1 to 100');
    expect(cms.requests).toHaveLength(1);
  });

  it('parses Retry-After forms and ignores unreadable ones', () => {
    expect(parseRetryAfter('7')).toBe(7000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), () => 4000)).toBe(6000);
    expect(parseRetryAfter(new Date(1000).toUTCString(), () => 4000)).toBe(0);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe('CMS HTTP client: a CMS that misbehaves', () => {
  it('times out a slow CMS on every attempt', async () => {
    // The CMS answers after 1 s, well within client()'s default 2 s: only the 50 ms timeout
    // asked for here can turn the answer into a timeout.
    cms.setDelay(1000);
    const error = await failure(client({ timeoutMs: 50, maxAttempts: 2 }).http.getJson(PAGE));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true, attempts: 2 });
    expect(error.message).toContain('no complete answer within 50 ms');
    expect(cms.requests).toHaveLength(2);
  });

  it('fails fast with kind unreachable when the CMS is down, and recovers when it is back', async () => {
    await cms.setDown(true);
    const { http, waits } = client({ maxAttempts: 3 });
    const error = await failure(http.getJson(PAGE));
    expect(error).toMatchObject({ kind: 'unreachable', retryable: true, attempts: 3 });
    expect(error.message).toBe(`CMS unreachable: GET ${PAGE}: connection refused (3 attempts)`);
    // Fast: a refused connection is retried after the backoff only (1 ms, then 2 ms here).
    expect(waits).toEqual([1, 2]);
    await cms.setDown(false);
    await expect(http.getJson(PAGE)).resolves.toMatchObject({ meta: { total: 2 } });
  });

  it('retries a body that is not JSON', async () => {
    cms.invalidJsonNext(1);
    await expect(client().http.getJson(PAGE)).resolves.toMatchObject({ meta: { total: 2 } });
    cms.invalidJsonNext(5);
    const error = await failure(client({ maxAttempts: 2 }).http.getJson(PAGE));
    expect(error).toMatchObject({ kind: 'invalid_json', retryable: true });
    expect(error.message).toContain('body is not JSON (starts with "<html>');
  });

  it('retries a body cut off mid-way', async () => {
    cms.cutOffNext(1);
    await expect(client().http.getJson(PAGE)).resolves.toMatchObject({ meta: { total: 2 } });
    cms.cutOffNext(5);
    const error = await failure(client({ maxAttempts: 2 }).http.getJson(PAGE));
    expect(error).toMatchObject({ kind: 'invalid_json', retryable: true, attempts: 2 });
    expect(error.message).toMatch(/body cut off after \d+ of \d+ bytes/);
  });

  it('refuses a body whose Content-Length passes the bound, without retrying', async () => {
    cms.hugeNext(200_000);
    const error = await failure(client({ maxResponseBytes: 100_000 }).http.getJson(PAGE));
    expect(error).toMatchObject({ kind: 'too_large', retryable: false, attempts: 1 });
    expect(error.message).toContain('Content-Length 200000 exceeds the 100000-byte bound');
    expect(cms.requests).toHaveLength(1);
  });

  it('stops reading a chunked body once it passes the bound', async () => {
    cms.hugeNext(5_000_000, { chunked: true });
    const error = await failure(client({ maxResponseBytes: 100_000 }).http.getJson(PAGE));
    expect(error).toMatchObject({ kind: 'too_large', retryable: false });
    expect(error.message).toContain('body exceeds the 100000-byte bound');
  });

  it('accepts a large body within the bound', async () => {
    cms.hugeNext(500_000, { chunked: true });
    await expect(client({ maxResponseBytes: 600_000 }).http.getJson(PAGE)).resolves.toHaveProperty('pad');
  });
});

describe('CMS HTTP client: redirects', () => {
  it('follows a redirect to the same origin', async () => {
    cms.redirectNext(1, `${cms.url}/articles?locale=en&page=1&per_page=1`);
    const body = await client().http.getJson(PAGE);
    expect(body).toMatchObject({ meta: { per_page: 1 } });
    expect(cms.requests.map((r) => r.path)).toEqual([PAGE, '/articles?locale=en&page=1&per_page=1']);
  });

  it('gives up after three redirects', async () => {
    cms.redirectNext(10, `${cms.url}${PAGE}`);
    const error = await failure(client().http.getJson(PAGE));
    expect(error).toMatchObject({ kind: 'redirect', retryable: false });
    expect(error.message).toContain('more than 3 redirects');
    expect(cms.requests).toHaveLength(4);
  });

  it('refuses a redirect to another host and never contacts it', async () => {
    let contacted = 0;
    const other = await startServer((_req, res) => {
      contacted += 1;
      res.end('{}');
    });
    try {
      cms.redirectNext(1, `${other.url}/steal`);
      const error = await failure(client().http.getJson(PAGE));
      expect(error).toMatchObject({ kind: 'redirect', retryable: false });
      expect(error.message).toContain(`to another origin (${other.url})`);
      expect(contacted).toBe(0);
      expect(cms.requests).toHaveLength(1);
    } finally {
      await closeServer(other.server);
    }
  });
});

describe('CMS HTTP client: secrets and aborts', () => {
  it('keeps the token out of log lines and error messages', async () => {
    cms.failNext(2, { status: 503, body: `{"error":{"message":"bad token ${TOKEN}"}}` });
    const { http } = client({ maxAttempts: 2 });
    const error = await failure(http.getJson(PAGE));
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('\n')).not.toContain(TOKEN);
    expect(error.message).not.toContain(TOKEN);
    expect(error.message).toContain('bad token [redacted]');
  });

  it('withholds a CMS message holding a short token whole, instead of cutting words out of it', async () => {
    // "invalid" as the token: cutting it out would garble the message into nonsense.
    cms.failNext(1, { status: 401, body: '{"error":{"message":"missing or invalid bearer token"}}' });
    const { http } = client({ token: 'invalid', maxAttempts: 1 });
    const error = await failure(http.getJson(PAGE));
    expect(error.message).not.toContain('invalid');
    expect(error.message).not.toContain('[redacted]');
    // The status stays: only the CMS's own text is withheld.
    expect(error.message).toContain('HTTP 401');
    expect(error.message).toContain('(withheld: it contains the CMS credentials)');
  });

  it('redacts a token before cutting the message short, so no start of it is left at the cut', async () => {
    // The message is cut at 200 characters: the token straddles the cut.
    cms.failNext(1, { status: 401, body: JSON.stringify({ error: { message: `${'x'.repeat(190)}${TOKEN} and more` } }) });
    const error = await failure(client({ maxAttempts: 1 }).http.getJson(PAGE));
    expect(error.message).toContain('HTTP 401');
    expect(error.message).not.toContain(TOKEN.slice(0, 6));
  });

  it('keeps credentials of the base URL out of error messages', async () => {
    await cms.setDown(true);
    const { http } = client({ baseUrl: cms.url.replace('http://', 'http://editor:hunter2@'), token: undefined, maxAttempts: 1 });
    const error = await failure(http.getJson(PAGE));
    expect(error.kind).toBe('unreachable');
    expect(`${error.message} ${logLines.join('')}`).not.toMatch(/hunter2|editor/);
  });

  it('stops at once when the caller aborts during a request', async () => {
    // Longer than the test may run: only the abort can end this request.
    cms.setDelay(10 * 60_000);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const error = await failure(client({ timeoutMs: 20 * 60_000 }).http.getJson(PAGE, controller.signal));
    expect(error).toMatchObject({ kind: 'aborted', retryable: false, attempts: 1 });
    expect(cms.requests).toHaveLength(1);
    expect(logLines.filter((l) => l.includes('retrying'))).toEqual([]);
  });

  it('stops at once when the caller aborts during a backoff wait', async () => {
    cms.failNext(5, { status: 503 });
    const controller = new AbortController();
    // The default sleep: a real ten-minute wait, longer than the test may run, that only the
    // abort can cut short.
    const { http } = client({ sleep: undefined, baseDelayMs: 10 * 60_000, maxDelayMs: 10 * 60_000, retryBudgetMs: 60 * 60_000 });
    setTimeout(() => controller.abort(), 50);
    const error = await failure(http.getJson(PAGE, controller.signal));
    expect(error.kind).toBe('aborted');
    expect(cms.requests).toHaveLength(1);
  });

  it('makes no request when the signal is already aborted', async () => {
    const error = await failure(client().http.getJson(PAGE, AbortSignal.abort()));
    expect(error.kind).toBe('aborted');
    expect(cms.requests).toHaveLength(0);
  });
});
