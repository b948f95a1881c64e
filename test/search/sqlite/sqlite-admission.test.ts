import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoreSession } from '../../../src/db/snapshot/snapshot-store.js';
import { AppError, SearchBusyError } from '../../../src/errors.js';
import { Admission } from '../../../src/search/admission.js';
import { AdmittedEngine } from '../../../src/search/admitted-engine.js';
import type { SearchEngine, SearchQuery } from '../../../src/search/engine.js';
import { PooledSqliteEngine } from '../../../src/search/sqlite/pool/pooled-engine.js';
import { DEFAULT_RANKED_OPTIONS, SqliteFtsEngine } from '../../../src/search/sqlite/sqlite-fts.js';
import { addKey, memoryLogger, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { expectError } from '../../support/contract-helpers.js';

/** A task the test finishes by hand. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

async function refusal(promise: Promise<unknown>): Promise<SearchBusyError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SearchBusyError);
  return error as SearchBusyError;
}

describe('admission control', () => {
  it('runs up to the concurrency, queues up to the queue, and refuses the rest at once with Retry-After', async () => {
    const admission = new Admission({ concurrency: 1, queue: 1, maxWaitMs: 60_000, timeoutMs: 60_000 });
    const g = gate();
    const first = admission.run('a', () => g.opened.then(() => 1));
    const second = admission.run('b', async () => 2);
    const third = refusal(admission.run('c', async () => 3));
    const busy = await third;
    expect(busy).toMatchObject({ code: 'search_busy', status: 503 });
    expect(busy.headers['Retry-After']).toBe('1');
    expect(busy.message).toMatch(/retry/i);
    expect(admission.stats()).toMatchObject({ in_flight: 1, queued: 1, refused_queue_full: 1 });
    g.open();
    expect(await first).toBe(1);
    expect(await second).toBe(2);
    expect(admission.stats()).toMatchObject({ in_flight: 0, queued: 0 });
  });

  it('lets a lone key use every slot and every place, then gives the newest of its waiting searches up to another key', async () => {
    // 2 slots, 2 places: key a alone runs 2 and queues 2; a third waiting one is refused.
    const admission = new Admission({ concurrency: 2, queue: 2, maxWaitMs: 60_000, timeoutMs: 60_000 });
    const g = gate();
    const a = [1, 2, 3, 4].map((n) => admission.run('a', () => g.opened.then(() => `a${n}`)));
    expect(admission.stats()).toMatchObject({ in_flight: 2, queued: 2 });
    const a5 = await refusal(admission.run('a', async () => 'a5'));
    expect(a5.message).toMatch(/your key has the most searches waiting/);
    // Key b arrives: a's newest waiting search (a4) gives its place up.
    const a4 = refusal(a.pop()!);
    const b1 = admission.run('b', () => g.opened.then(() => 'b1'));
    expect((await a4).message).toMatch(/retry/i);
    expect(admission.stats()).toMatchObject({ in_flight: 2, queued: 2, refused_queue_full: 1, refused_shed: 1 });
    g.open();
    expect(await Promise.all([...a, b1])).toEqual(['a1', 'a2', 'a3', 'b1']);
  });

  it('starts waiting searches round-robin between keys, not first come first served', async () => {
    const admission = new Admission({ concurrency: 1, queue: 10, maxWaitMs: 60_000, timeoutMs: 60_000 });
    const order: string[] = [];
    const g = gate();
    const job = (name: string) => async () => {
      order.push(name);
      if (name === 'a1') await g.opened;
    };
    const all = [admission.run('a', job('a1')), admission.run('a', job('a2')), admission.run('a', job('a3')), admission.run('b', job('b1'))];
    g.open();
    await Promise.all(all);
    expect(order).toEqual(['a1', 'a2', 'b1', 'a3']);
  });

  it('starts one waiting search per freed slot, never past the concurrency, from the key with the fewest running', async () => {
    const admission = new Admission({ concurrency: 2, queue: 4, maxWaitMs: 60_000, timeoutMs: 60_000 });
    const gates = new Map<string, ReturnType<typeof gate>>();
    const started: string[] = [];
    const job = (name: string) => () => {
      started.push(name);
      const g = gate();
      gates.set(name, g);
      return g.opened.then(() => name);
    };
    const settle = () => new Promise((r) => setImmediate(r));
    const all = [admission.run('a', job('a1')), admission.run('b', job('b1')), admission.run('a', job('a2')), admission.run('a', job('a3')), admission.run('b', job('b2'))];
    await settle();
    expect(started).toEqual(['a1', 'b1']);
    expect(admission.stats()).toMatchObject({ in_flight: 2, queued: 3 });

    gates.get('a1')!.open();
    await settle();
    // One slot freed: one search starts (key a's next, as a now runs none), not the whole queue.
    expect(started).toEqual(['a1', 'b1', 'a2']);
    expect(admission.stats()).toMatchObject({ in_flight: 2, queued: 2 });

    gates.get('b1')!.open();
    await settle();
    // Key b's turn, though a3 waited longer.
    expect(started).toEqual(['a1', 'b1', 'a2', 'b2']);
    expect(admission.stats()).toMatchObject({ in_flight: 2, queued: 1 });

    gates.get('a2')!.open();
    await settle();
    gates.get('b2')!.open();
    await settle();
    gates.get('a3')!.open();
    expect(await Promise.all(all)).toEqual(['a1', 'b1', 'a2', 'a3', 'b2']);
    expect(admission.stats()).toMatchObject({ in_flight: 0, queued: 0, admitted: 5 });
  });

  it('refuses at arrival a search expected to wait past the longest wait, from how long searches have been taking', async () => {
    let now = 0;
    const admission = new Admission({ concurrency: 1, queue: 10, maxWaitMs: 100, timeoutMs: 60_000 }, () => now);
    // One search that held its slot 60 ms: searches are expected to take that long.
    const seed = gate();
    const seeded = admission.run('a', () => seed.opened);
    now = 60;
    seed.open();
    await seeded;
    expect(admission.stats().service_ms).toBe(60);

    const g = gate();
    const running = admission.run('a', () => g.opened.then(() => 'running'));
    // One search ahead: 60 ms expected, it waits.
    const second = admission.run('b', async () => 'second');
    // Two ahead: 120 ms expected, past 100 ms: refused at once, while the queue has room.
    const busy = await refusal(admission.run('c', async () => 'third'));
    expect(busy.headers['Retry-After']).toBe('1');
    expect(busy.message).toMatch(/retry/i);
    expect(admission.stats()).toMatchObject({ in_flight: 1, queued: 1, refused_wait: 1, refused_queue_full: 0 });
    g.open();
    expect(await running).toBe('running');
    expect(await second).toBe('second');
  });

  it('refuses a search still waiting for a slot at the longest wait, and gives its place back', async () => {
    // No search has ended yet, so nothing is expected: the search waits, up to 50 ms.
    const admission = new Admission({ concurrency: 1, queue: 10, maxWaitMs: 50, timeoutMs: 60_000 });
    const g = gate();
    const running = admission.run('a', () => g.opened.then(() => 'running'));
    const waiting = refusal(admission.run('b', async () => 'never'));
    expect(admission.stats()).toMatchObject({ queued: 1 });
    const busy = await waiting;
    expect(busy.message).toMatch(/retry/i);
    expect(admission.stats()).toMatchObject({ in_flight: 1, queued: 0, refused_wait: 1 });
    g.open();
    expect(await running).toBe('running');
    // The refused search never ran.
    expect(admission.stats()).toMatchObject({ admitted: 1 });
  });

  it('answers search_busy when a search passes its time budget, and keeps the slot until the work really ends', async () => {
    const admission = new Admission({ concurrency: 1, queue: 0, maxWaitMs: 60_000, timeoutMs: 50 });
    const g = gate();
    const busy = await refusal(admission.run('a', () => g.opened));
    expect(busy.message).toMatch(/did not finish within 50 ms/);
    expect(admission.stats()).toMatchObject({ refused_timeout: 1, in_flight: 1 });
    g.open();
    await g.opened;
    await new Promise((r) => setImmediate(r));
    expect(admission.stats()).toMatchObject({ in_flight: 0 });
  });
});

describe('search_busy over HTTP and stopping a runaway search', () => {
  const NOW = '2026-11-01T12:00:00Z';
  const dir = tempDir('search-busy-');
  const dbPath = dir.path('snapshot.db');
  let api: TestApi;
  let key: string;
  let hold = gate();
  let admitted: AdmittedEngine;

  /** The real engine, held at a gate: a search that takes as long as the test wants. */
  class HeldEngine extends SqliteFtsEngine implements SearchEngine {
    override async search(session: StoreSession, query: SearchQuery) {
      await hold.opened;
      return super.search(session, query);
    }
  }

  beforeAll(async () => {
    buildSnapshot(dbPath, {
      sections: [rawSection({ slug: 'fiber', name: 'Fiber', position: 1 })],
      articles: [rawArticle({ slug: 'heron', title: 'Heron optics', section_slug: 'fiber', published_at: '2026-10-01T00:00:00Z' })],
    });
    key = addKey(dbPath).key;
    admitted = new AdmittedEngine(new HeldEngine(), { concurrency: 1, queue: 0, maxWaitMs: 60_000, timeoutMs: 60_000 });
    api = await startApi({ databasePath: dbPath, clock: testClock(NOW), engine: admitted });
  });

  afterAll(async () => {
    hold.open();
    await api.close();
    dir.cleanup();
  });

  it('answers 503 search_busy with Retry-After when search is at capacity, while lists still answer', async () => {
    hold = gate();
    const running = api.request.get('/api/v1/search?q=heron').set('X-API-Key', key).then((r) => r);
    while (admitted.stats().in_flight === 0) await new Promise((r) => setTimeout(r, 5));
    const busy = await api.request.get('/api/v1/search?q=optics').set('X-API-Key', key);
    expectError(busy, 503, 'search_busy');
    expect(busy.headers['retry-after']).toBe('1');
    expect(busy.body.error.message).toMatch(/retry/i);
    expect((await api.request.get('/api/v1/articles').set('X-API-Key', key)).status).toBe(200);
    hold.open();
    expect((await running).status).toBe(200);
  });

  it("gives another partner's search the place of one partner's newest waiting search when every place is taken", async () => {
    // One slot, one place: the first key's second search waits, and the second key's search
    // takes its place, so one partner's burst cannot keep another partner out.
    const shared = new AdmittedEngine(new HeldEngine(), { concurrency: 1, queue: 1, maxWaitMs: 60_000, timeoutMs: 60_000 });
    const two = await startApi({ databasePath: dbPath, clock: testClock(NOW), engine: shared });
    const other = addKey(dbPath, 'Second partner').key;
    try {
      hold = gate();
      const running = two.request.get('/api/v1/search?q=heron').set('X-API-Key', key).then((r) => r);
      while (shared.stats().in_flight === 0) await new Promise((r) => setTimeout(r, 5));
      const again = two.request.get('/api/v1/search?q=optics').set('X-API-Key', key).then((r) => r);
      while (shared.stats().queued === 0) await new Promise((r) => setTimeout(r, 5));
      const theirs = two.request.get('/api/v1/search?q=optics').set('X-API-Key', other).then((r) => r);
      const shed = await again;
      expectError(shed, 503, 'search_busy');
      expect(shed.body.error.message).toMatch(/most searches waiting/);
      hold.open();
      expect((await theirs).status).toBe(200);
      expect((await running).status).toBe(200);
    } finally {
      hold.open();
      await two.close();
    }
  });

  it('stops a search at its budget by replacing its thread, and the pool keeps answering', async () => {
    const engine = new PooledSqliteEngine(1, { databasePath: dbPath, busyTimeoutMs: 2_000, ranked: { ...DEFAULT_RANKED_OPTIONS, cacheBytes: 1 << 20, rankAllMax: 5_000 }, nice: 0, logLevel: 'warn' }, memoryLogger().logger);
    try {
      const session = api.store.session();
      const base = { locale: 'en' as const, section: undefined, activeSections: [], exposure: { rank: () => 0 }, page: 1, limit: 5, now: Date.parse(NOW), contentTag: 'x' };
      expect((await engine.search(session, { ...base, q: 'heron' })).total).toBe(1);
      const controller = new AbortController();
      const pending = engine.search(session, { ...base, q: 'optics', signal: controller.signal });
      controller.abort(new SearchBusyError('over budget', 1));
      await expect(pending).rejects.toBeInstanceOf(AppError);
      expect(engine.stats().threads_replaced).toBe(1);
      expect((await engine.search(session, { ...base, q: 'heron' })).total).toBe(1);
    } finally {
      await engine.close();
    }
  });
});
