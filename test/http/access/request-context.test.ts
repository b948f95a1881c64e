import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { isoPlus, MINUTE } from '../../support/contract-helpers.js';

/*
 * The request context is set the same way by the fast path and by Express: the request log
 * line, written from it, has the same fields whichever path answered.
 */

const NOW = '2026-11-01T12:00:00Z';
const dir = tempDir();
const dbPath = dir.path('snapshot.db');
let api: TestApi;
let partner: { id: number; key: string };

interface Line {
  level: number;
  msg: string;
  req: { id: string; method: string; url: string };
  res: { status: number };
  responseTime: number;
  keyId?: number;
  errorCode?: string;
}

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber', name: 'Fiber' })],
    articles: [rawArticle({ slug: 'hello', title: 'Laser hello', section_slug: 'fiber', published_at: isoPlus(NOW, -MINUTE) })],
  });
  partner = addKey(dbPath);
  api = await startApi({ databasePath: dbPath, clock: testClock(NOW) });
});

afterAll(async () => {
  await api.close();
  dir.cleanup();
});

/** Sends a request with a known request id and returns its log line. */
async function lineOf(path: string, headers: Record<string, string>, id: string): Promise<Line> {
  await api.request.get(path).set({ ...headers, 'X-Request-Id': id });
  let line: Line | undefined;
  await vi.waitFor(() => {
    line = api.logs.map((l) => JSON.parse(l) as Line).find((l) => l.req?.id === id);
    expect(line).toBeDefined();
  });
  return line!;
}

describe('the request log line', () => {
  it('has the same fields for a page answered by Express (first time) and by the fast path (repeated)', async () => {
    const key = { 'X-API-Key': partner.key };
    const byExpress = await lineOf('/api/v1/articles?limit=7', key, 'ctx-miss');
    const byFastPath = await lineOf('/api/v1/articles?limit=7', key, 'ctx-hit');
    const shape = (l: Line) => ({ ...l, time: undefined, responseTime: typeof l.responseTime, req: { ...l.req, id: undefined } });
    expect(shape(byFastPath)).toEqual(shape(byExpress));
    expect(byFastPath).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { method: 'GET', url: '/api/v1/articles?limit=7' },
      res: { status: 200 },
      keyId: partner.id,
    });
    expect(byFastPath.errorCode).toBeUndefined();
  });

  it('carries the error code of an error, with the key id once the key was accepted', async () => {
    expect(await lineOf('/api/v1/articles/nope', { 'X-API-Key': partner.key }, 'ctx-404')).toMatchObject({
      res: { status: 404 },
      keyId: partner.id,
      errorCode: 'not_found',
    });
    const refused = await lineOf('/api/v1/articles', {}, 'ctx-401');
    expect(refused).toMatchObject({ res: { status: 401 }, errorCode: 'missing_api_key' });
    expect(refused.keyId).toBeUndefined();
  });
});

describe('the response head', () => {
  /** Every header of one GET, in the order sent, with the values that vary per request blanked. */
  async function headOf(url: string, key: string): Promise<string[]> {
    // node:http's rawHeaders keep the order and case sent (fetch's Headers sort them).
    const raw = await new Promise<string[]>((resolve, reject) => {
      get(url, { headers: { 'X-API-Key': key } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.rawHeaders));
      }).on('error', reject);
    });
    const varying = new Set(['date', 'x-request-id', 'ratelimit']);
    const head: string[] = [];
    for (let i = 0; i < raw.length; i += 2) head.push(varying.has(raw[i]!.toLowerCase()) ? raw[i]! : `${raw[i]}: ${raw[i + 1]}`);
    return head;
  }

  it('is the same, field by field and in order, from Express (first time) and from the fast path (repeated)', async () => {
    const limited = await startApi({ databasePath: dbPath, clock: testClock(NOW), rateLimit: { perMinute: 600, burstSeconds: 10 } });
    try {
      const url = `${limited.url}/api/v1/articles?limit=3`;
      const byExpress = await headOf(url, partner.key);
      const byFastPath = await headOf(url, partner.key);
      expect(byFastPath).toEqual(byExpress);
      for (const field of ['X-Request-Id', 'Content-Security-Policy', 'RateLimit-Policy: "default";q=', 'RateLimit', 'ETag', 'Link', 'Content-Length']) {
        expect(byFastPath.some((h) => h.startsWith(field))).toBe(true);
      }
      expect(limited.logs.some((l) => l.includes('"url":"/api/v1/articles?limit=3"'))).toBe(true);
    } finally {
      await limited.close();
    }
  });
});
