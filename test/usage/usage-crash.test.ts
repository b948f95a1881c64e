import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { USAGE_FLUSH_INTERVAL_MS } from '../../src/db/keys/usage-counter.js';
import { addKey, keysPathFor } from '../support/api.js';
import { killApis, spawnApi } from '../support/api-process.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { readRows } from '../support/keys-helpers.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';

/*
 * What a crash loses: the API answers a steady stream of requests and is killed with
 * SIGKILL (no flush); the requests it answered but did not write cover at most the flush
 * interval plus a write. The figure in docs/editors.md#usage comes from this test's output.
 */

const dir = tempDir();
const dbPath = dir.path('snapshot.db');

beforeAll(() => {
  buildSnapshot(dbPath, { sections: [rawSection({ slug: 'fiber' })], articles: [rawArticle({ slug: 'hello', section_slug: 'fiber' })] });
});
afterEach(() => killApis());
afterAll(() => dir.cleanup());

it('a kill -9 loses at most the last flush interval of counts', async () => {
  const losses: number[] = [];
  for (const [round, runMs] of [3_100, 4_700, 5_900].entries()) {
    const { id, key } = addKey(dbPath, `Crash ${round}`);
    const api = await spawnApi({ DATABASE_PATH: dbPath });
    const answeredAt: number[] = [];
    const started = Date.now();
    while (Date.now() - started < runMs) {
      const res = await fetch(`${api.url}/api/v1/articles`, { headers: { 'X-API-Key': key } });
      await res.arrayBuffer();
      if (res.status === 200) answeredAt.push(Date.now());
    }
    const killedAt = Date.now();
    api.child.kill('SIGKILL');
    await api.exited;
    const [row] = readRows<{ articles: number }>(keysPathFor(dbPath), `SELECT coalesce(sum(articles), 0) AS articles FROM key_usage WHERE key_id = ${id}`);
    const stored = row!.articles;
    expect(stored).toBeLessThanOrEqual(answeredAt.length);
    // The oldest answer not written: everything after it was lost.
    const firstLost = answeredAt[stored];
    const lostMs = firstLost === undefined ? 0 : killedAt - firstLost;
    losses.push(lostMs);
    console.log(`usage crash round ${round}: ${answeredAt.length} answered, ${stored} written, ${lostMs} ms of counts lost`);
  }
  for (const lost of losses) expect(lost).toBeLessThanOrEqual(USAGE_FLUSH_INTERVAL_MS + 500);
}, 120_000);
