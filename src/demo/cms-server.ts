import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isLocale, type Locale } from '../locale.js';
import { parseIsoToMs } from '../lib/time.js';
import type { CmsStore, RawArticle, RawSection } from './cms-store.js';

export interface ArticlesPageQuery {
  locale: Locale;
  page: number;
  perPage: number;
  status: 'published' | undefined;
  /** As sent, before parsing. */
  updatedSince: string | undefined;
}

export interface ArticlesBody {
  data: RawArticle[];
  meta: { page: number; per_page: number; total: number; pages: number };
}

/** Hook points for the test CMS; the demo runs without them. */
export interface CmsServerHooks {
  /** Runs before anything else; returns true when it answered the request itself. */
  intercept?(req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean>;
  /** Runs before an articles page is read from the store, e.g. to change records between pages. */
  beforeArticlesPage?(query: ArticlesPageQuery): void | Promise<void>;
  /** Rewrites an articles page just before it is sent. */
  transformArticlesPage?(body: ArticlesBody): unknown;
}

export interface CmsServerOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** e.g. `/export`: the contract's paths are served under it. */
  basePath?: string;
  /** When set, requests must carry `Authorization: Bearer <token>`. */
  token?: string;
  store: CmsStore;
  hooks?: CmsServerHooks;
}

export interface CmsServerHandle {
  /** Base URL including basePath, e.g. `http://127.0.0.1:41234/export`. */
  url: string;
  port: number;
  store: CmsStore;
  server: Server;
  close(): Promise<void>;
}

const MAX_PER_PAGE = 100;

/** Starts an HTTP server that speaks the CMS contract (docs/specs/cms-contract.md) over the store. */
export async function startCmsServer(options: CmsServerOptions): Promise<CmsServerHandle> {
  const host = options.host ?? '127.0.0.1';
  const basePath = (options.basePath ?? '').replace(/\/+$/, '');
  if (basePath !== '' && !basePath.startsWith('/')) throw new Error('basePath must start with "/"');
  const { store, hooks } = options;
  const tokenDigest = options.token === undefined ? undefined : digest(`Bearer ${options.token}`);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (hooks?.intercept && (await hooks.intercept(req, res))) return;
    const url = new URL(req.url ?? '/', 'http://cms.invalid');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendError(res, 405, 'method_not_allowed', 'only GET is supported');
    }
    // Hash both sides so the comparison takes the same time whatever the header's length.
    if (tokenDigest && !timingSafeEqual(digest(req.headers.authorization ?? ''), tokenDigest)) {
      res.setHeader('www-authenticate', 'Bearer');
      return sendError(res, 401, 'unauthorized', 'missing or wrong bearer token');
    }
    const route = url.pathname.startsWith(`${basePath}/`) ? url.pathname.slice(basePath.length) : undefined;
    if (route !== '/sections' && route !== '/articles') {
      return sendError(res, 404, 'not_found', `no such path: ${url.pathname}`);
    }
    const locale = url.searchParams.get('locale');
    if (!isLocale(locale)) return sendError(res, 400, 'invalid_parameter', 'locale must be en or zh');
    if (route === '/sections') {
      const data: RawSection[] = store.listSections(locale);
      return sendJson(res, 200, { data });
    }
    const query = parseArticlesQuery(url.searchParams, locale);
    if (typeof query === 'string') return sendError(res, 400, 'invalid_parameter', query);
    await hooks?.beforeArticlesPage?.(query);
    const { data, total } = store.queryArticles({
      locale,
      page: query.page,
      perPage: query.perPage,
      publishedOnly: query.status === 'published',
      updatedSinceMs: query.updatedSince === undefined ? undefined : parseIsoToMs(query.updatedSince),
    });
    const body: ArticlesBody = {
      data,
      meta: { page: query.page, per_page: query.perPage, total, pages: Math.ceil(total / query.perPage) },
    };
    return sendJson(res, 200, hooks?.transformArticlesPage ? hooks.transformArticlesPage(body) : body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, 'internal', error instanceof Error ? error.message : 'internal error');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const hostInUrl = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${hostInUrl}:${port}${basePath}`,
    port,
    store,
    server,
    close: () => closeServer(server),
  };
}

/** Parses the articles query; returns the error message for a 400 when it is invalid. */
function parseArticlesQuery(params: URLSearchParams, locale: Locale): ArticlesPageQuery | string {
  const page = positiveInt(params.get('page') ?? '1');
  if (page === undefined) return 'page must be an integer of 1 or more';
  const perPage = positiveInt(params.get('per_page') ?? String(MAX_PER_PAGE));
  if (perPage === undefined || perPage > MAX_PER_PAGE) return `per_page must be an integer from 1 to ${MAX_PER_PAGE}`;
  const status = params.get('status') ?? undefined;
  if (status !== undefined && status !== 'published') return 'status must be published when given';
  const updatedSince = params.get('updated_since') ?? undefined;
  if (updatedSince !== undefined && parseIsoToMs(updatedSince) === undefined) {
    return 'updated_since must be an ISO 8601 timestamp with an offset';
  }
  return { locale, page, perPage, status, updatedSince };
}

function positiveInt(value: string): number | undefined {
  if (!/^\d{1,9}$/.test(value)) return undefined;
  const n = Number(value);
  return n >= 1 ? n : undefined;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
  });
  res.end(json);
}

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { error: { code, message } });
}

/** Stops listening and drops open connections, so keep-alive clients cannot hold it open. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
