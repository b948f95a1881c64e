import express from 'express';
import fc from 'fast-check';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../../src/http/contract/openapi-operations.js';
import { ROUTE_LIST, ROUTES, routeOf } from '../../../src/http/endpoints/routes-table.js';
import { ApiMetrics } from '../../../src/observability/api-metrics.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';

/*
 * One routes table (src/http/endpoints/routes-table.ts): the route a request is matched to once is the
 * one Express answers it with, the OpenAPI document lists the table's paths, and the fast path
 * answers only the table's `fast` routes, and nothing at all with FAST_PATH=off.
 */

/** Sends `path` exactly as written (no URL normalisation) and returns the body. */
function rawGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('the route of a request', () => {
  // Express with every route of the table, each answering its own pattern: what Express matches.
  let server: Server;
  let port: number;
  beforeAll(async () => {
    const app = express();
    for (const route of ROUTE_LIST) app.get(route.path, (req, res) => res.send(String(req.route?.path)));
    app.use((_req, res) => res.status(404).send('none'));
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const expressRoute = async (path: string) => {
    const { status, body } = await rawGet(port, path);
    return status === 404 ? 'none' : body;
  };

  it.each([
    '/api/v1/articles',
    '/api/v1/articles/',
    '/api/v1/articles?limit=2&section=a/b',
    '/api/v1/articles/?limit=2',
    '/API/V1/Articles',
    '/api/v1/articles/hello',
    '/api/v1/articles/hello/',
    '/api/v1/articles/Hello%20World?locale=zh',
    '/api/v1/articles/a%2Fb',
    '/api/v1/articles/hello/more',
    '/api/v1/articles//',
    '/api/v1/articles//hello',
    '/api/v1//articles',
    '/api/v1/articlesx',
    '/api/v1/categories/',
    '/api/v1/CHANGES?since=x',
    '/api/v1/search?q=a/b',
    '/api/v1/openapi.json',
    '/api/v1/openapiXjson',
    '/api/v1',
    '/api/v1/',
    '/health',
    '/health/',
    '/Health',
    '/healthz',
    '/docs',
    '/docs/',
    '/docs/assets/docs.js',
    '/docs/assets/',
    '/docs/assets/a/b',
    '/docs/other',
    '/',
  ])('%s is matched as Express matches it', async (path) => {
    expect(routeOf(path)?.path ?? 'none').toBe(await expressRoute(path));
  });

  it('is matched as Express matches it for any path made of the routes’ words', async () => {
    const segment = fc.constantFrom('api', 'v1', 'V1', 'articles', 'Articles', 'categories', 'changes', 'search', 'openapi.json', 'health', 'docs', 'assets', 'x', '', '%2F', 'a.b');
    const path = fc
      .tuple(fc.array(segment, { minLength: 1, maxLength: 5 }), fc.constantFrom('', '/', '?q=/', '/?x'))
      .map(([segments, tail]) => `/${segments.join('/')}${tail}`);
    await fc.assert(
      fc.asyncProperty(path, async (p) => {
        expect(routeOf(p)?.path ?? 'none', p).toBe(await expressRoute(p));
      }),
      { numRuns: 300 },
    );
  });

  it('gives every keyed route and only those a place in the OpenAPI document, with the same key rule', () => {
    const documented = ROUTE_LIST.filter((r) => r.openapi !== undefined);
    expect(OPERATIONS.map((o) => o.path).sort()).toEqual(documented.map((r) => r.openapi).sort());
    for (const op of OPERATIONS) expect(documented.find((r) => r.openapi === op.path)!.keyed, op.path).toBe(op.keyed);
    expect(ROUTES.article.openapi).toBe('/api/v1/articles/{slug}');
    expect(ROUTE_LIST.filter((r) => r.keyed).every((r) => r.path.startsWith('/api/v1/'))).toBe(true);
  });
});

describe('the fast path switch', () => {
  const NOW = '2026-11-01T12:00:00Z';
  const dir = tempDir();
  const dbPath = dir.path('snapshot.db');
  let key: string;
  const apis: { api: TestApi; registry: Registry }[] = [];
  let on: TestApi;
  let off: TestApi;
  const fastCount = async (registry: Registry) =>
    (await registry.getSingleMetric('syndication_fast_path_responses_total')!.get()).values[0]?.value ?? 0;

  beforeAll(async () => {
    buildSnapshot(dbPath, {
      sections: [rawSection({ slug: 'fiber' })],
      articles: [rawArticle({ slug: 'hello', section_slug: 'fiber', published_at: '2026-11-01T11:00:00Z' })],
    });
    key = addKey(dbPath).key;
    for (const fastPath of [true, false]) {
      const registry = new Registry();
      const api = await startApi({ databasePath: dbPath, clock: testClock(NOW), fastPath, deps: { metrics: new ApiMetrics(registry) } });
      apis.push({ api, registry });
    }
    [on, off] = apis.map((a) => a.api) as [TestApi, TestApi];
  });
  afterAll(async () => {
    await Promise.all(apis.map((a) => a.api.close()));
    dir.cleanup();
  });

  const paths = ['/api/v1/articles?limit=1', '/api/v1/articles/hello', '/api/v1/categories', '/api/v1/changes', '/API/V1/ARTICLES/'];
  const visible = (res: { status: number; headers: Record<string, string>; body: unknown }) => {
    const { date: _date, 'x-request-id': _id, 'ratelimit': _r, connection: _c, 'keep-alive': _k, ...headers } = res.headers;
    return { status: res.status, headers, body: res.body };
  };

  it('on: repeated reads of the fast routes are answered without Express, the same as Express answers them', async () => {
    for (const path of paths) {
      // The first answer is sent, the second kept (src/lib/doorkeeper.ts), the third comes from the cache.
      const first = await on.request.get(path).set('X-API-Key', key);
      await on.request.get(path).set('X-API-Key', key);
      const again = await on.request.get(path).set('X-API-Key', key);
      expect(first.status, path).toBe(200);
      expect(visible(again), path).toEqual(visible(first));
    }
    expect(await fastCount(apis[0]!.registry)).toBe(paths.length);
  });

  it('off: Express answers every request, with the same answers', async () => {
    for (const path of paths) {
      const first = await off.request.get(path).set('X-API-Key', key);
      const again = await off.request.get(path).set('X-API-Key', key);
      expect(visible(again), path).toEqual(visible(first));
      expect(visible(again), path).toEqual(visible(await on.request.get(path).set('X-API-Key', key)));
    }
    expect(await fastCount(apis[1]!.registry)).toBe(0);
  });
});
