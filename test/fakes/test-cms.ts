import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { closeServer, sendJson, startCmsServer, type ArticlesBody, type ArticlesPageQuery } from '../../src/demo/cms-server.js';
import { CmsStore } from '../../src/demo/cms-store.js';

export interface TestCmsOptions {
  token?: string;
  basePath?: string;
  store?: CmsStore;
}

export interface RequestLogEntry {
  method: string;
  /** Path and query as received, basePath included. */
  path: string;
  /** Whether an Authorization header was present; its value is never kept. */
  hasAuthorization: boolean;
}

export interface FailOptions {
  status: number;
  /** Sent as the Retry-After header: seconds, or an HTTP date. */
  retryAfter?: number | string;
  /** Raw body; a JSON error object by default. */
  body?: string;
}

export interface TestCms {
  /** Base URL including basePath. */
  url: string;
  port: number;
  store: CmsStore;
  requests: RequestLogEntry[];
  /** true closes the port (connections refused); false listens again on the same port. */
  setDown(down: boolean): Promise<void>;
  /** Every answer waits this long first; 0 turns it off. */
  setDelay(ms: number): void;
  /** The next n answers have this status; 200 with a `body` serves a response of the wrong shape. */
  failNext(n: number, options: FailOptions): void;
  /** The next n answers are 200 with an HTML body. */
  invalidJsonNext(n: number): void;
  /** The next n answers declare a Content-Length, send half of a (synthetic) body, then drop the connection. */
  cutOffNext(n: number): void;
  /** The next articles page has record `index` patched (a value of undefined deletes the field). */
  badRecordNext(patch: Record<string, unknown>, index?: number): void;
  /** The next n answers are 302 to `toUrl`. */
  redirectNext(n: number, toUrl: string): void;
  /** The next answer is valid JSON of `bytes` bytes, with a Content-Length unless `chunked`. */
  hugeNext(bytes: number, options?: { chunked?: boolean }): void;
  /** Called before every articles page is served; undefined removes it. */
  onPage(hook: ((query: ArticlesPageQuery) => void | Promise<void>) | undefined): void;
  /** Rewrites every articles page (after badRecordNext) before it is sent; undefined removes it. */
  rewritePages(hook: ((body: ArticlesBody, query: ArticlesPageQuery) => unknown) | undefined): void;
  close(): Promise<void>;
}

type Action = (res: ServerResponse) => void;

/**
 * The contract CMS of src/demo/cms-server.ts with failure switches. One-shot failures queue
 * up in call order and each is consumed by the next request, whatever its path.
 */
export async function startTestCms(options: TestCmsOptions = {}): Promise<TestCms> {
  const store = options.store ?? new CmsStore();
  const requests: RequestLogEntry[] = [];
  const actions: Action[] = [];
  const badRecords: Array<{ patch: Record<string, unknown>; index: number }> = [];
  const stopping = new AbortController();
  let delayMs = 0;
  let pageHook: ((query: ArticlesPageQuery) => void | Promise<void>) | undefined;
  let rewrite: ((body: ArticlesBody, query: ArticlesPageQuery) => unknown) | undefined;
  // The query of the page being served: the server calls beforeArticlesPage, then transforms.
  let servedQuery: ArticlesPageQuery | undefined;

  async function intercept(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    requests.push({ method: req.method ?? '', path: req.url ?? '', hasAuthorization: req.headers.authorization !== undefined });
    // A client that gave up leaves writes failing on a dead socket; that is expected here.
    res.on('error', () => undefined);
    if (delayMs > 0) {
      try {
        await delay(delayMs, undefined, { signal: stopping.signal });
      } catch {
        res.destroy();
        return true;
      }
    }
    const action = actions.shift();
    if (!action) return false;
    action(res);
    return true;
  }

  const queue = (n: number, action: Action): void => {
    for (let i = 0; i < n; i++) actions.push(action);
  };

  const handle = await startCmsServer({
    ...(options.token === undefined ? {} : { token: options.token }),
    ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
    store,
    hooks: {
      intercept,
      beforeArticlesPage: (query) => {
        servedQuery = query;
        return pageHook?.(query);
      },
      transformArticlesPage: (body) => {
        const patched = patchPage(body, badRecords);
        return rewrite && servedQuery ? rewrite(patched as ArticlesBody, servedQuery) : patched;
      },
    },
  });
  const host = '127.0.0.1';

  return {
    url: handle.url,
    port: handle.port,
    store,
    requests,
    async setDown(down) {
      if (down) return closeServer(handle.server);
      if (handle.server.listening) return;
      await new Promise<void>((resolve, reject) => {
        handle.server.once('error', reject);
        handle.server.listen(handle.port, host, () => {
          handle.server.off('error', reject);
          resolve();
        });
      });
    },
    setDelay(ms) {
      delayMs = ms;
    },
    failNext(n, { status, retryAfter, body }) {
      queue(n, (res) => {
        if (retryAfter !== undefined) res.setHeader('retry-after', String(retryAfter));
        if (body === undefined) return sendJson(res, status, { error: { code: 'injected', message: `injected ${status}` } });
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
    },
    invalidJsonNext(n) {
      const html = '<html><body><h1>502 Bad Gateway</h1></body></html>';
      queue(n, (res) => {
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(html) });
        res.end(html);
      });
    },
    cutOffNext(n) {
      const body = JSON.stringify({ data: [], meta: { page: 1, per_page: 1, total: 0, pages: 0 }, pad: 'x'.repeat(4000) });
      queue(n, (res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.write(body.slice(0, body.length / 2), () => res.destroy());
      });
    },
    badRecordNext(patch, index = 0) {
      badRecords.push({ patch, index });
    },
    redirectNext(n, toUrl) {
      queue(n, (res) => {
        res.writeHead(302, { location: toUrl, 'content-length': 0 });
        res.end();
      });
    },
    hugeNext(bytes, { chunked = false } = {}) {
      queue(1, (res) => void sendHuge(res, bytes, chunked));
    },
    onPage(hook) {
      pageHook = hook;
    },
    rewritePages(hook) {
      rewrite = hook;
    },
    async close() {
      stopping.abort();
      await closeServer(handle.server);
    },
  };
}

function patchPage(body: ArticlesBody, pending: Array<{ patch: Record<string, unknown>; index: number }>): unknown {
  const next = pending[0];
  if (!next || body.data.length <= next.index) return body;
  pending.shift();
  const record: Record<string, unknown> = { ...body.data[next.index] };
  for (const [key, value] of Object.entries(next.patch)) {
    if (value === undefined) delete record[key];
    else record[key] = value;
  }
  const data: unknown[] = [...body.data];
  data[next.index] = record;
  return { ...body, data };
}

// Valid JSON of exactly `bytes` bytes, so only a size bound can make a client refuse it.
async function sendHuge(res: ServerResponse, bytes: number, chunked: boolean): Promise<void> {
  const head = '{"data":[],"meta":{"page":1,"per_page":1,"total":0,"pages":0},"pad":"';
  const tail = '"}';
  const padding = Math.max(0, bytes - head.length - tail.length);
  res.writeHead(200, { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': head.length + padding + tail.length }) });
  res.write(head);
  const chunk = 'x'.repeat(64 * 1024);
  for (let left = padding; left > 0 && !res.destroyed; left -= chunk.length) {
    const ok = res.write(left >= chunk.length ? chunk : chunk.slice(0, left));
    if (!ok) await drainOrClose(res);
  }
  if (!res.destroyed) res.end(tail);
}

function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
