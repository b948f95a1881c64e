/** The HTTP server around the fake engine: auth, failure switches, request log, lifecycle. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { authorize, authTarget, type FakeApiKey } from './auth.js';
import { Engine } from './engine.js';
import { errorBody, MeiliError, type MeiliErrorBody } from './errors.js';
import { Api, type ApiResponse } from './routes.js';
import { tokenizerMode } from './search/tokenize.js';
import type { IndexSettings } from './settings.js';
import type { Doc } from './values.js';

export interface FakeMeilisearchOptions {
  /** When set, every route but /health needs `Authorization: Bearer <masterKey>` or one of `apiKeys`. */
  masterKey?: string;
  /** API keys with their actions and indexes (only with a master key, as in the engine). */
  apiKeys?: FakeApiKey[];
  /**
   * The version to pretend to be (`GET /version`'s pkgVersion), default 1.19.0. Payloads follow
   * it: before 1.18 a swap with `rename` is refused as an unknown field.
   */
  version?: string;
  /**
   * The engine's `--http-payload-size-limit`: a request body past it answers 413
   * `payload_too_large`. Default 100 MB (100,000,000 bytes), the engine's default.
   */
  payloadLimitBytes?: number;
  /** How long a task waits enqueued, and then how long it stays processing. Default 5 ms. */
  taskDelayMs?: number;
}

export interface RequestLogEntry {
  method: string;
  /** Path without the query string, e.g. `/indexes/articles/search`. */
  path: string;
  /** Query parameters as received. */
  query: Record<string, string>;
  /** Parsed JSON body (the raw text when it is not JSON); absent when empty. */
  body?: unknown;
}

export interface FailRequestsOptions {
  status: number;
  /** Meilisearch error code; `internal` for 5xx, `bad_request` otherwise by default. */
  code?: string;
  message?: string;
}

export interface FailTaskOptions {
  code: string;
  message: string;
  type?: MeiliErrorBody['type'];
}

/** A task as `GET /tasks/{uid}` answers it. */
export type FakeTask = Record<string, unknown> & {
  uid: number;
  indexUid: string | null;
  status: string;
  type: string;
  error: MeiliErrorBody | null;
  details: Record<string, unknown>;
};

export interface FakeMeilisearch {
  /** `http://127.0.0.1:PORT`, stable across setDown(true)/setDown(false). */
  readonly url: string;
  readonly port: number;
  /** Every request that reached the server, in arrival order. */
  readonly requests: RequestLogEntry[];
  /** Stops listening, drops every connection (hung ones included) and stops the task queue. */
  close(): Promise<void>;
  /** true: the port refuses connections (listener closed, open connections dropped); false: listens again on the same port. */
  setDown(down: boolean): Promise<void>;
  /**
   * true: requests are accepted and never answered. false: held requests are then processed and
   * answered late, even those whose client already timed out (so a timed-out write still lands).
   */
  setHang(hang: boolean): void;
  /** The next `n` requests answer a Meilisearch-style JSON error with this status. */
  failRequests(n: number, options: FailRequestsOptions): void;
  /** Every request answers 502 with an HTML body, like a proxy in front of a dead Meilisearch. */
  setHtmlBadGateway(on: boolean): void;
  /** The next task to be processed ends `failed` with this error and changes nothing. */
  failNextTask(error: FailTaskOptions): void;
  /** Resolves once no task is enqueued or processing. */
  idle(): Promise<void>;
  indexUids(): string[];
  /** Stored documents of an index, in internal order; throws if the index does not exist. */
  documents(uid: string): Doc[];
  /** Full settings of an index; throws if the index does not exist. */
  settings(uid: string): IndexSettings;
  /** Every task still stored, oldest first. */
  tasks(): FakeTask[];
  /**
   * A dumpless upgrade (`--experimental-dumpless-upgrade`) to another version: indexes keep
   * their documents as the old version tokenized them; queries and new indexes follow the new one.
   */
  setVersion(version: string): void;
  /**
   * true: searches answer as past the index's `searchCutoffMs`: `degraded: true`, hits in
   * internal order (unranked), as the engine returns what it had when the cutoff struck.
   */
  setDegraded(on: boolean): void;
}

const BAD_GATEWAY_HTML =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

function send(res: ServerResponse, response: ApiResponse): void {
  if (res.destroyed || res.writableEnded) return;
  if (response.body === undefined) {
    res.writeHead(response.status, { 'content-length': '0' });
    res.end();
    return;
  }
  const text = JSON.stringify(response.body);
  res.writeHead(response.status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

/** The body, or `null` when it passed `limit` bytes (the rest is read and dropped). */
function readBody(req: IncomingMessage, limit: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= limit) chunks.push(c);
    });
    req.on('end', () => resolve(size > limit ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** How the engine prints a byte size: `Byte::get_appropriate_unit(UnitType::Binary)`. */
function binarySize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${Number(value.toFixed(2))} ${units[unit]}`;
}

export async function startFakeMeilisearch(options: FakeMeilisearchOptions = {}): Promise<FakeMeilisearch> {
  const engine = new Engine(options.taskDelayMs ?? 5);
  const api = new Api(engine, options.version ?? '1.19.0');
  engine.tokenizer = tokenizerMode(api.version);
  const payloadLimit = options.payloadLimitBytes ?? 100_000_000;
  const requests: RequestLogEntry[] = [];
  const sockets = new Set<Socket>();
  let hung: { res: ServerResponse; answer: () => void }[] = [];
  let hang = false;
  let htmlBadGateway = false;
  let failures: { remaining: number; options: FailRequestsOptions } | null = null;
  let listening = false;
  let closed = false;

  const answer = (req: IncomingMessage, res: ServerResponse, url: URL, rawBody: string): void => {
    const pathname = url.pathname.replace(/\/+$/, '') || '/';
    try {
      const segments = pathname.split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s));
      // /health is public; everything else needs a key when a master key is set, as in the engine.
      if (options.masterKey !== undefined && pathname !== '/health') {
        let parsed: unknown;
        try {
          parsed = rawBody === '' ? undefined : JSON.parse(rawBody);
        } catch {
          parsed = undefined;
        }
        authorize(req.headers.authorization, options.masterKey, options.apiKeys ?? [], authTarget(req.method ?? 'GET', segments, parsed));
      }
      send(
        res,
        api.handle({
          method: req.method ?? 'GET',
          segments,
          query: url.searchParams,
          rawQuery: url.search.replace(/^\?/, ''),
          contentType: req.headers['content-type'],
          rawBody,
        }),
      );
    } catch (err) {
      if (err instanceof MeiliError) send(res, { status: err.status, body: err.body() });
      else send(res, { status: 500, body: errorBody('internal', `fake-meilisearch bug: ${(err as Error).stack ?? String(err)}`) });
    }
  };

  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req, payloadLimit).catch(() => '');
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (body === null) {
        requests.push({ method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), body: '(payload too large)' });
        // The key is checked first (the GuardedData extractor comes before the body's), then
        // actix's payload limit (http_payload_size_limit).
        if (options.masterKey !== undefined && url.pathname !== '/health') {
          const segments = url.pathname.split('/').filter((p) => p !== '').map((p) => decodeURIComponent(p));
          try {
            authorize(req.headers.authorization, options.masterKey, options.apiKeys ?? [], authTarget(req.method ?? 'GET', segments, undefined));
          } catch (err) {
            if (err instanceof MeiliError) return send(res, { status: err.status, body: err.body() });
            throw err;
          }
        }
        const message = `The provided payload reached the size limit. The maximum accepted payload size is ${binarySize(payloadLimit)}.`;
        send(res, { status: 413, body: errorBody('payload_too_large', message) });
        return;
      }
      const rawBody = body;
      const entry: RequestLogEntry = { method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams) };
      if (rawBody !== '') {
        try {
          entry.body = JSON.parse(rawBody) as unknown;
        } catch {
          entry.body = rawBody;
        }
      }
      requests.push(entry);

      if (htmlBadGateway) {
        res.writeHead(502, { 'content-type': 'text/html', 'content-length': String(Buffer.byteLength(BAD_GATEWAY_HTML)) });
        res.end(BAD_GATEWAY_HTML);
        return;
      }
      if (failures && failures.remaining > 0) {
        const { status, code, message } = failures.options;
        failures.remaining -= 1;
        if (failures.remaining === 0) failures = null;
        const c = code ?? (status >= 500 ? 'internal' : 'bad_request');
        send(res, { status, body: errorBody(c, message ?? `Injected failure (${status}) from the fake Meilisearch.`) });
        return;
      }
      if (hang) {
        hung.push({ res, answer: () => answer(req, res, url, rawBody) });
        return;
      }
      answer(req, res, url, rawBody);
    })();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  const listen = (port: number): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        listening = true;
        resolve();
      });
    });

  const stopListening = async (): Promise<void> => {
    if (!listening) return;
    listening = false;
    const done = new Promise<void>((resolve) => server.close(() => resolve()));
    // Keep-alive and hung connections would otherwise keep working (or keep close() waiting).
    for (const socket of sockets) socket.destroy();
    hung = [];
    await done;
  };

  await listen(0);
  const port = (server.address() as AddressInfo).port;

  const requireIndex = (uid: string) => {
    const index = engine.indexes.get(uid);
    if (!index) throw new Error(`fake-meilisearch: no index \`${uid}\` (indexes: ${[...engine.indexes.keys()].join(', ') || 'none'})`);
    return index;
  };

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    async close() {
      if (closed) return;
      closed = true;
      engine.close();
      await stopListening();
    },
    async setDown(down) {
      if (closed) throw new Error('fake-meilisearch: closed');
      if (down) await stopListening();
      else if (!listening) await listen(port);
    },
    setHang(on) {
      hang = on;
      if (!on) {
        const held = hung;
        hung = [];
        // Processed even when the client gave up waiting: a write that timed out may still land.
        for (const h of held) h.answer();
      }
    },
    failRequests(n, failOptions) {
      failures = n > 0 ? { remaining: n, options: failOptions } : null;
    },
    setHtmlBadGateway(on) {
      htmlBadGateway = on;
    },
    failNextTask(error) {
      engine.failNextTask(errorBody(error.code, error.message, error.type));
    },
    idle: () => engine.idle(),
    indexUids: () => [...engine.indexes.keys()].sort(),
    documents: (uid) => [...requireIndex(uid).documents.values()].map((d) => structuredClone(d)),
    settings: (uid) => structuredClone(requireIndex(uid).settings),
    tasks: () => engine.allTaskViews() as FakeTask[],
    setVersion(version) {
      api.version = version;
      engine.tokenizer = tokenizerMode(version);
    },
    setDegraded(on) {
      engine.degraded = on;
    },
  };
}
