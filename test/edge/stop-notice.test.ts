import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addKey } from '../support/api.js';
import { killApis, spawnApi } from '../support/api-process.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';

/*
 * SIGTERM to the real entry point: /health says `draining` (503) while every other request is
 * still answered, for SHUTDOWN_DELAY_MS, and only then does the port close; a process no one
 * health-checks stops at once; SIGINT cuts the wait short.
 */

const dir = tempDir('stop-notice-');
const dbPath = dir.path('snapshot.db');

beforeAll(() => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber' }), { ...rawSection({ slug: 'fiber' }), locale: 'zh' }],
    articles: [rawArticle({ slug: 'hello', section_slug: 'fiber', published_at: '2026-01-01T00:00:00Z' })],
  });
});
afterEach(() => killApis());
afterAll(() => dir.cleanup());

/** One GET on a fresh connection: status and body, or the connection error's code. */
function get(url: string, path: string, key?: string): Promise<{ status: number; body: string } | string> {
  return new Promise((resolve) => {
    const req = request(`${url}${path}`, { agent: false, headers: { Connection: 'close', ...(key ? { 'X-API-Key': key } : {}) } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end();
  });
}

const statusOf = (r: { status: number } | string) => (typeof r === 'string' ? r : r.status);

describe('SIGTERM with a balancer watching /health', () => {
  it('answers /health 503 draining while it still serves, for SHUTDOWN_DELAY_MS, then closes the port and exits 0', async () => {
    const { key } = addKey(dbPath, 'Drain Partner');
    const api = await spawnApi({ DATABASE_PATH: dbPath, SHUTDOWN_DELAY_MS: '2500' });
    expect(statusOf(await get(api.url, '/health'))).toBe(200);
    const stoppedAt = Date.now();
    api.child.kill('SIGTERM');
    await expect.poll(async () => statusOf(await get(api.url, '/health')), { timeout: 2_000, interval: 50 }).toBe(503);
    const health = await get(api.url, '/health');
    expect(typeof health === 'string' ? health : JSON.parse(health.body)).toMatchObject({ status: 'draining' });
    // Partners are still served, with a key or without one.
    expect(statusOf(await get(api.url, '/api/v1/articles', key))).toBe(200);
    expect(statusOf(await get(api.url, '/api/v1/openapi.json'))).toBe(200);
    // Then the port closes and the process exits cleanly, not before the delay.
    await expect.poll(async () => statusOf(await get(api.url, '/health')), { timeout: 10_000, interval: 100 }).toBe('ECONNREFUSED');
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(2_400);
    expect((await api.exited).code).toBe(0);
    const messages = api.logs().map((l) => String(l.msg));
    expect(messages).toContain('stopping: /health answers 503 draining while requests are still served');
    expect(messages).toContain('stopped');
  }, 60_000);

  it('ends the wait at once on SIGINT', async () => {
    const api = await spawnApi({ DATABASE_PATH: dbPath, SHUTDOWN_DELAY_MS: '60000' });
    expect(statusOf(await get(api.url, '/health'))).toBe(200);
    api.child.kill('SIGTERM');
    await expect.poll(async () => statusOf(await get(api.url, '/health')), { timeout: 2_000, interval: 50 }).toBe(503);
    const interruptedAt = Date.now();
    api.child.kill('SIGINT');
    expect((await api.exited).code).toBe(0);
    expect(Date.now() - interruptedAt).toBeLessThan(5_000);
  }, 60_000);
});

describe('SIGTERM with nothing watching /health', () => {
  it('does not wait: no balancer would notice', async () => {
    const api = await spawnApi({ DATABASE_PATH: dbPath, SHUTDOWN_DELAY_MS: '60000' });
    const stoppedAt = Date.now();
    api.child.kill('SIGTERM');
    expect((await api.exited).code).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(5_000);
    expect(api.logs().map((l) => String(l.msg))).not.toContain('stopping: /health answers 503 draining while requests are still served');
  }, 60_000);
});
