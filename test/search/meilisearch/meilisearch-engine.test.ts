import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addKey, memoryLogger, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { startFakeMeilisearch, type FakeMeilisearch, type RequestLogEntry } from '../../fakes/fake-meilisearch.js';
import { meiliFixture, type MeiliFixture } from '../../support/meili-fixture.js';
import { AdmittedEngine } from '../../../src/search/admitted-engine.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { deepStrict, expectError, isoPlus, MINUTE } from '../../support/contract-helpers.js';
import { healthSchema } from '../../../src/http/contract/response-schemas.js';

/*
 * What the API's Meilisearch engine sends and how it fails, against the fake driven by the
 * real client. What partners see of search in general is the shared contract's business
 * (engine-contract.ts); this file covers what only the Meilisearch engine can get wrong.
 */

const NOW = '2026-11-01T12:00:00Z';
const NOW_TS = Date.parse(NOW) / 1000;
const MASTER_KEY = 'meili-master-key-7f3c9a51d2';
const TIMEOUT_MS = 300;

const dir = tempDir('meili-engine-');
const dbPath = dir.path('snapshot.db');
const clock = testClock(NOW);
const log = memoryLogger('info');
let fake: FakeMeilisearch;
let meili: MeiliFixture;
let api: TestApi;
let key: string;

const ago = (minutes: number) => isoPlus(NOW, -minutes * MINUTE);

beforeAll(async () => {
  fake = await startFakeMeilisearch({ masterKey: MASTER_KEY, taskDelayMs: 1 });
  meili = meiliFixture({ host: fake.url, apiKey: MASTER_KEY }, { label: 'engine' });
  buildSnapshot(dbPath, {
    sections: [
      rawSection({ slug: 'fiber', name: 'Alpha', position: 1 }),
      rawSection({ slug: 'ultrafast', name: 'Beta', position: 2 }),
      rawSection({ slug: 'retired', name: 'Omega', position: 3, active: false }),
      { ...rawSection({ slug: 'fiber', name: '资讯', position: 1 }), locale: 'zh' as const },
    ],
    articles: [
      rawArticle({ slug: 'laser-cutting', title: 'Laser cutting of thick steel', section_slug: 'fiber', published_at: ago(20) }),
      rawArticle({ slug: 'laser-marking', title: 'Laser marking of medical parts', section_slug: 'ultrafast', published_at: ago(21) }),
      rawArticle({ slug: 'laser-retired', title: 'Laser history', section_slug: 'retired', published_at: ago(22) }),
      ...Array.from({ length: 12 }, (_, i) =>
        rawArticle({ slug: `cladding-${i}`, title: `Cladding report ${i}`, section_slug: 'fiber', published_at: ago(100 + i) }),
      ),
      rawArticle({ locale: 'zh', slug: 'zh-latin', title: 'Laser 展会开幕', section_slug: 'fiber', published_at: ago(5) }),
      rawArticle({ locale: 'zh', slug: 'zh-fiber-laser', title: '光纤激光器出口增长', section_slug: 'fiber', published_at: ago(6) }),
    ],
    now: Date.parse(NOW),
  });
  await meili.indexSnapshot(dbPath);
  key = addKey(dbPath).key;
  api = await startApi({ databasePath: dbPath, clock, engine: meili.engine({ timeoutMs: TIMEOUT_MS, logger: log.logger }) });
});

afterAll(async () => {
  await api?.close();
  await fake?.close();
  dir.cleanup();
});

beforeEach(() => {
  clock.set(NOW);
});

// A response timeout keeps a hung request from holding the suite (and the fake's switches) hostage.
const get = (path: string, query: Record<string, string | number> = {}) =>
  api.request.get(path).query(query).set('X-API-Key', key).timeout(5_000);
const health = () => api.request.get('/health').timeout(5_000);
const slugs = (body: { data: { slug: string }[] }) => body.data.map((a) => a.slug).sort();

/** The search requests the fake received while `fn` ran. */
async function searchesDuring(fn: () => Promise<unknown>): Promise<RequestLogEntry[]> {
  const from = fake.requests.length;
  await fn();
  return fake.requests.slice(from).filter((r) => r.method === 'POST' && r.path.endsWith('/search'));
}

/** The filter sent, as `{ sections, until }`, whatever the spacing of the expression. */
function parseFilter(filter: unknown): { sections: string[]; until: number } {
  expect(Array.isArray(filter), JSON.stringify(filter)).toBe(true);
  const parts = filter as string[];
  expect(parts).toHaveLength(2);
  const sections = parts.map((p) => /^section_slug IN \[(.*)\]$/.exec(p)).find(Boolean);
  const until = parts.map((p) => /^published_at_ts <= (\d+)$/.exec(p)).find(Boolean);
  expect(sections, JSON.stringify(filter)).toBeTruthy();
  expect(until, JSON.stringify(filter)).toBeTruthy();
  return { sections: JSON.parse(`[${sections![1]}]`) as string[], until: Number(until![1]) };
}

describe('what the engine sends', () => {
  it('filters on the active sections and on published_at_ts <= now', async () => {
    const [request] = await searchesDuring(async () => expect((await get('/api/v1/search', { q: 'laser' })).status).toBe(200));
    expect(request?.path).toBe(`/indexes/${meili.uid('en')}/search`);
    const filter = parseFilter((request?.body as { filter: unknown }).filter);
    expect(filter.sections.sort()).toEqual(['fiber', 'ultrafast']);
    expect(filter.until).toBe(NOW_TS);
  });

  it('narrows the section filter to the section asked for, and follows the clock', async () => {
    clock.set(isoPlus(NOW, 90 * MINUTE));
    const [request] = await searchesDuring(async () => {
      const res = await get('/api/v1/search', { q: 'laser', section: 'fiber' });
      expect(slugs(res.body)).toEqual(['laser-cutting']);
    });
    const filter = parseFilter((request?.body as { filter: unknown }).filter);
    expect(filter.sections).toEqual(['fiber']);
    expect(filter.until).toBe(NOW_TS + 90 * 60);
  });

  it('never lets an inactive or unknown section through the filter', async () => {
    const requests = await searchesDuring(async () => {
      for (const section of ['retired', 'ghost']) {
        const res = await get('/api/v1/search', { q: 'laser', section });
        expect(res.status).toBe(200);
        expect(res.body.data).toEqual([]);
        expect(res.body.meta).toMatchObject({ total: 0, pages: 0 });
      }
      expect(slugs((await get('/api/v1/search', { q: 'laser' })).body)).toEqual(['laser-cutting', 'laser-marking']);
    });
    for (const r of requests) expect(JSON.stringify((r.body as { filter: unknown }).filter)).not.toMatch(/retired|ghost/);
  });

  it('searches the index of the locale asked for, with locales eng for en and cmn for zh', async () => {
    const requests = await searchesDuring(async () => {
      expect(slugs((await get('/api/v1/search', { q: 'laser' })).body)).toEqual(['laser-cutting', 'laser-marking']);
      expect(slugs((await get('/api/v1/search', { q: '激光', locale: 'zh' })).body)).toEqual(['zh-fiber-laser']);
    });
    expect(requests.map((r) => [r.path, (r.body as { locales?: unknown }).locales])).toEqual([
      [`/indexes/${meili.uid('en')}/search`, ['eng']],
      [`/indexes/${meili.uid('zh')}/search`, ['cmn']],
    ]);
  });

  it('asks for one page by page and hitsPerPage, all words required, ids only', async () => {
    const [request] = await searchesDuring(async () => {
      const res = await get('/api/v1/search', { q: 'cladding', page: 2, limit: 5 });
      expect(res.body.meta).toMatchObject({ page: 2, limit: 5, total: 12, pages: 3 });
      expect(res.body.data).toHaveLength(5);
    });
    const body = request?.body as Record<string, unknown>;
    expect(body).toMatchObject({ q: 'cladding', page: 2, hitsPerPage: 5, attributesToRetrieve: ['id'], matchingStrategy: 'all' });
    expect(body).not.toHaveProperty('offset');
    expect(body).not.toHaveProperty('limit');
  });
});

describe('typo tolerance from meilisearch.config.json', () => {
  it('forgives a typo on the English index: lazer finds laser', async () => {
    expect(fake.settings(meili.uid('en')).typoTolerance.enabled).toBe(true);
    const res = await get('/api/v1/search', { q: 'lazer' });
    expect(res.status).toBe(200);
    expect(slugs(res.body)).toEqual(['laser-cutting', 'laser-marking']);
    expect(res.body.meta).toMatchObject({ total: 2, q: 'lazer' });
  });

  it('has no typo tolerance on the Chinese index', async () => {
    expect(fake.settings(meili.uid('zh')).typoTolerance.enabled).toBe(false);
    expect(slugs((await get('/api/v1/search', { q: 'laser', locale: 'zh' })).body)).toEqual(['zh-latin']);
    const res = await get('/api/v1/search', { q: 'lazer', locale: 'zh' });
    expect(res.body.data).toEqual([]);
    expect(res.body.meta).toMatchObject({ total: 0 });
  });
});

interface Breakage {
  name: string;
  detail: RegExp;
  break(): void | Promise<void>;
  repair(): void | Promise<void>;
}

const BREAKAGES: Breakage[] = [
  { name: 'down (connection refused)', detail: /unreachable/i, break: () => fake.setDown(true), repair: () => fake.setDown(false) },
  { name: `hanging past MEILI_TIMEOUT_MS (${TIMEOUT_MS} ms)`, detail: /in time/i, break: () => fake.setHang(true), repair: () => fake.setHang(false) },
  {
    name: 'answering 500',
    detail: /500/,
    break: () => fake.failRequests(1_000, { status: 500, code: 'internal', message: 'Disk full.' }),
    repair: () => fake.failRequests(0, { status: 500 }),
  },
  { name: 'behind a proxy answering an HTML 502', detail: /not JSON/i, break: () => fake.setHtmlBadGateway(true), repair: () => fake.setHtmlBadGateway(false) },
  {
    name: 'answering JSON that is not a search result',
    detail: /not available/,
    break: () => fake.failRequests(1_000, { status: 200, code: 'surprise', message: 'Not what you asked for.' }),
    repair: () => fake.failRequests(0, { status: 200 }),
  },
];

/** No stack, no Meilisearch address (which could carry credentials), no key. */
function expectNothingSecret(text: string): void {
  expect(text).not.toContain(MASTER_KEY);
  expect(text).not.toContain(fake.url);
  expect(text).not.toContain(`:${fake.port}`);
  expect(text).not.toMatch(/\n\s*at\s|Bearer/);
}

describe.each(BREAKAGES)('a Meilisearch $name', (breakage) => {
  it('gives 503 service_unavailable on search only; lists, details, categories and health still answer', async () => {
    await breakage.break();
    try {
      // A hanging Meilisearch is given up at the engine's request timeout: without one (the
      // client's default) this request would never end and the test would time out.
      const res = await get('/api/v1/search', { q: 'laser' });
      expectError(res, 503, 'service_unavailable');
      expect(res.headers['retry-after']).toBeDefined();
      expectNothingSecret(res.text);
      expectError(await get('/api/v1/search', { q: '激光', locale: 'zh' }), 503, 'service_unavailable');

      const list = await get('/api/v1/articles');
      expect(list.status).toBe(200);
      expect(list.body.meta.total).toBe(14);
      expect((await get('/api/v1/articles/laser-cutting')).status).toBe(200);
      expect((await get('/api/v1/articles/zh-latin', { locale: 'zh' })).status).toBe(200);
      expect((await get('/api/v1/categories')).status).toBe(200);

      const status = await health();
      expect(status.status).toBe(200);
      expect(status.body.status).toBe('ok');
      expect(status.body.search).toEqual({ engine: 'meilisearch', status: 'unavailable', detail: expect.any(String) });
      expect(status.body.search.detail).toMatch(breakage.detail);
      expectNothingSecret(status.text);
    } finally {
      await breakage.repair();
    }
  });

  it('searches again once Meilisearch is back, and health says ok', async () => {
    await breakage.break();
    try {
      expect((await get('/api/v1/search', { q: 'laser' })).status).toBe(503);
    } finally {
      await breakage.repair();
    }
    const res = await get('/api/v1/search', { q: 'laser' });
    expect(res.status, res.text).toBe(200);
    expect(slugs(res.body)).toEqual(['laser-cutting', 'laser-marking']);
    const status = await health();
    expect(status.status).toBe(200);
    expect(status.body.search).toEqual({
      engine: 'meilisearch',
      status: 'ok',
      version: '1.19.0',
      indexes: {
        en: { uid: meili.uid('en'), status: 'ok', documents: 15 },
        zh: { uid: meili.uid('zh'), status: 'ok', documents: 2 },
      },
    });
    // What the OpenAPI document publishes for /health holds for this engine's fields too.
    expect(deepStrict(healthSchema).safeParse(status.body).success).toBe(true);
  });
});

describe('an index that does not exist yet (no sync has built it)', () => {
  it('gives 503 service_unavailable on search, and the rest answers', async () => {
    const unbuilt = meiliFixture({ host: fake.url, apiKey: MASTER_KEY }, { label: 'unbuilt' });
    const other = await startApi({ databasePath: dbPath, clock, engine: unbuilt.engine({ timeoutMs: TIMEOUT_MS }) });
    try {
      const res = await other.request.get('/api/v1/search').query({ q: 'laser' }).set('X-API-Key', key);
      expectError(res, 503, 'service_unavailable');
      expectNothingSecret(res.text);
      expect((await other.request.get('/api/v1/articles').set('X-API-Key', key)).status).toBe(200);
    } finally {
      await other.close();
    }
  });
});

describe('a server answering search results of the wrong shape', () => {
  let garbage: Server;
  let url: string;
  let other: TestApi;
  const bodies = [
    { hits: [{ id: 'not-a-number' }], totalHits: 1, page: 1, hitsPerPage: 20, totalPages: 1 },
    { hits: [{ id: 1 }], estimatedTotalHits: 1 },
    { results: [] },
    [1, 2, 3],
    'laser',
  ];
  let next: unknown;

  beforeAll(async () => {
    garbage = createServer((_req, res) => {
      const text = JSON.stringify(next);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
    await new Promise<void>((resolve) => garbage.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(garbage.address() as AddressInfo).port}`;
    const elsewhere = meiliFixture({ host: url, apiKey: MASTER_KEY }, { prefix: meili.prefix });
    other = await startApi({ databasePath: dbPath, clock, engine: elsewhere.engine({ timeoutMs: TIMEOUT_MS }) });
  });

  afterAll(async () => {
    await other?.close();
    garbage.closeAllConnections();
    await new Promise<void>((resolve) => garbage.close(() => resolve()));
  });

  it.each(bodies.map((body) => [JSON.stringify(body), body]))('gives 503, never 500 or a wrong page, for %s', async (_name, body) => {
    next = body;
    const res = await other.request.get('/api/v1/search').query({ q: 'laser' }).set('X-API-Key', key).timeout(5_000);
    expectError(res, 503, 'service_unavailable');
    expect(res.text).not.toContain(url);
  });
});

describe('a search stopped at its time budget', () => {
  it('ends its request to Meilisearch, so its slot is free at once, and does not mark Meilisearch down', async () => {
    // The budget (200 ms) is far shorter than the client's request timeout (10 s): the slot
    // must not stay taken until the client gives up.
    const engineLog = memoryLogger('info');
    const admitted = new AdmittedEngine(meili.engine({ timeoutMs: 10_000, logger: engineLog.logger }), {
      concurrency: 1,
      queue: 0,
      maxWaitMs: 0,
      timeoutMs: 200,
    });
    const budgeted = await startApi({ databasePath: dbPath, clock, engine: admitted });
    // A first search reads the server's version, which is then known: the hang is the search's own.
    expect((await budgeted.request.get('/api/v1/search').query({ q: 'cladding' }).set('X-API-Key', key).timeout(5_000)).status).toBe(200);
    fake.setHang(true);
    try {
      const res = await budgeted.request.get('/api/v1/search').query({ q: 'laser' }).set('X-API-Key', key).timeout(5_000);
      expectError(res, 503, 'search_busy');
      const freedBy = Date.now() + 2_000;
      while (admitted.stats().in_flight !== 0 && Date.now() < freedBy) await new Promise((r) => setTimeout(r, 10));
      expect(admitted.stats().in_flight).toBe(0);
      expect(engineLog.lines.some((l) => l.includes('search unavailable'))).toBe(false);
    } finally {
      fake.setHang(false);
      await budgeted.close();
    }
  });
});

describe('a search past MEILI_TIMEOUT_MS, sent with the search\'s own signal', () => {
  it('is logged as a timeout, not as Meilisearch unreachable', async () => {
    const engineLog = memoryLogger('info');
    // Admission passes a signal (its budget, 5 s, is far longer than the engine's 300 ms).
    const admitted = new AdmittedEngine(meili.engine({ timeoutMs: 300, logger: engineLog.logger }), {
      concurrency: 1,
      queue: 0,
      maxWaitMs: 0,
      timeoutMs: 5_000,
    });
    const timed = await startApi({ databasePath: dbPath, clock, engine: admitted });
    expect((await timed.request.get('/api/v1/search').query({ q: 'cladding' }).set('X-API-Key', key).timeout(5_000)).status).toBe(200);
    fake.setHang(true);
    try {
      expect((await timed.request.get('/api/v1/search').query({ q: 'laser' }).set('X-API-Key', key).timeout(5_000)).status).toBe(503);
      const text = engineLog.lines.join('\n');
      expect(text).toMatch(/search unavailable: Meilisearch did not answer in time/);
      expect(text).not.toMatch(/unreachable/);
    } finally {
      fake.setHang(false);
      await timed.close();
    }
  });
});

describe('a degraded answer (the engine\'s search cutoff struck)', () => {
  it('is not served as a ranked page: 503, and the log names the cutoff', async () => {
    const from = log.lines.length;
    fake.setDegraded(true);
    try {
      expect((await get('/api/v1/search', { q: 'laser' })).status).toBe(503);
    } finally {
      fake.setDegraded(false);
    }
    expect(log.lines.slice(from).join('\n')).toMatch(/search cutoff \(degraded: true/);
    expect((await get('/api/v1/search', { q: 'laser' })).status).toBe(200);
  });
});

describe('logs', () => {
  it('say why search is unavailable and when it is back, and never hold the Meilisearch key', async () => {
    const from = { engine: log.lines.length, api: api.logs.length };
    for (const breakage of [BREAKAGES[0]!, BREAKAGES[1]!]) {
      await breakage.break();
      try {
        expect((await get('/api/v1/search', { q: 'laser' })).status).toBe(503);
        expect((await health()).body.search.status).toBe('unavailable');
      } finally {
        await breakage.repair();
      }
      expect((await get('/api/v1/search', { q: 'laser' })).status).toBe(200);
    }
    const text = [...log.lines.slice(from.engine), ...api.logs.slice(from.api)].join('\n');
    expect(text).toMatch(/search unavailable: Meilisearch unreachable/);
    expect(text).toMatch(/search unavailable: Meilisearch did not answer in time/);
    expect(text).toMatch(/search available again/);
    expect(text).toMatch(/"status":503/);
    expect(text).not.toContain(MASTER_KEY);
    expect(text).not.toMatch(/Bearer/);
  });
});
