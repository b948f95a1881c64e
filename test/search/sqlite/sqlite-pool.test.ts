import { DEFAULT_RANKED_OPTIONS } from '../../../src/search/sqlite/sqlite-fts.js';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AdmittedEngine } from '../../../src/search/admitted-engine.js';
import type { Worker } from 'node:worker_threads';
import type { StoreSession } from '../../../src/db/snapshot/snapshot-store.js';
import { ServiceUnavailableError } from '../../../src/errors.js';
import type { SearchQuery } from '../../../src/search/engine.js';
import { PooledSqliteEngine } from '../../../src/search/sqlite/pool/pooled-engine.js';
import { memoryLogger, startApi, addKey, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { openWriter } from '../../../src/db/sqlite/connection.js';
import { searchContract } from '../contract/engine-contract.js';
import { REPO_ROOT } from '../../support/worker.js';

const setup = (databasePath: string) => ({
  databasePath,
  busyTimeoutMs: 2_000,
  ranked: { ...DEFAULT_RANKED_OPTIONS, cacheBytes: 1024 * 1024, rankAllMax: 5_000 },
  nice: 0,
  logLevel: 'warn',
});

// The same contract as the in-thread engine, through the worker threads and admission control.
searchContract('sqlite in worker threads', () => ({
  startApi: (dbPath, clock) =>
    startApi({
      databasePath: dbPath,
      clock,
      engine: new AdmittedEngine(new PooledSqliteEngine(2, setup(dbPath), memoryLogger().logger), { concurrency: 2, queue: 64, maxWaitMs: 60_000, timeoutMs: 30_000 }),
    }),
  index: async () => {},
  cleanup: async () => {},
}));

describe('a search thread starts light', () => {
  it('loads no drizzle-orm but its migrator (the query builder would cost each thread 0.1 s and 10 MB for nothing)', () => {
    // The thread's whole static module graph is resolved before any of it runs, so the hook
    // sees every module a thread would load, though the script stops at once outside a thread.
    const code = `
      import { registerHooks } from 'node:module';
      const seen = [];
      registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.push(r.url); return r; } });
      await import(${JSON.stringify(pathToFileURL(`${REPO_ROOT}dist/src/search/sqlite/pool/worker.js`).href)}).catch(() => {});
      console.log(JSON.stringify(seen));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: REPO_ROOT, encoding: 'utf8' });
    const urls = JSON.parse(run.stdout) as string[];
    expect(urls.some((u) => u.includes('/search/sqlite/sqlite-rank.js'))).toBe(true);
    expect(urls.some((u) => u.includes('better-sqlite3'))).toBe(true);
    expect(urls.filter((u) => u.includes('drizzle-orm/') && !u.includes('drizzle-orm/migrator') && !u.includes('drizzle-orm/migrator.js'))).toEqual([]);
  });
});

describe('search threads follow the snapshot', () => {
  const pooled = onePooledThread('sqlite-pool-', 'kestrel-one', 'Kestrel optics one');
  const dbPath = pooled.dbPath;

  const search = async (q: string) => {
    const res = await pooled.api().request.get('/api/v1/search').query({ q }).set('X-API-Key', pooled.key());
    expect(res.status, res.text).toBe(200);
    return (res.body as { data: { slug: string }[] }).data.map((a) => a.slug);
  };

  it('sees an article another process commits, and stops returning one it takes down', async () => {
    expect(await search('kestrel')).toEqual(['kestrel-one']);
    // Written the way the sync worker writes: another connection, a new content version.
    buildSnapshot(dbPath, {
      sections: [rawSection({ slug: 'fiber', name: 'Fiber', position: 1 })],
      articles: [
        rawArticle({ slug: 'kestrel-one', title: 'Kestrel optics one', section_slug: 'fiber', published_at: '2026-10-01T00:00:00Z' }),
        rawArticle({ slug: 'kestrel-two', title: 'Kestrel optics two', section_slug: 'fiber', published_at: '2026-10-02T00:00:00Z' }),
      ],
    });
    expect(await search('kestrel')).toEqual(['kestrel-two', 'kestrel-one']);
    const db = openWriter(dbPath, { busyTimeoutMs: 5_000 });
    try {
      db.$client.prepare(`UPDATE sections SET active = 0 WHERE slug = 'fiber'`).run();
      db.$client.prepare(`UPDATE snapshot_state SET version = version + 1`).run();
    } finally {
      db.$client.close();
    }
    expect(await search('kestrel')).toEqual([]);
    expect(pooled.engine().stats().threads).toBe(1);
  });
});

describe('search threads started ahead of the first search', () => {
  const dir = tempDir('sqlite-pool-start-');
  const dbPath = dir.path('snapshot.db');
  let engine: PooledSqliteEngine | undefined;
  const builtViews = (lines: string[]) =>
    lines
      .map((l) => JSON.parse(l) as { msg: string; thread: number; locale: string; version: number })
      .filter((l) => l.msg.startsWith('search thread built its view'));

  beforeAll(() => {
    buildSnapshot(dbPath, {
      sections: [rawSection({ slug: 'fiber', name: 'Fiber', position: 1 }), { ...rawSection({ slug: 'fiber', name: 'Fiber', position: 1 }), locale: 'zh' }],
      articles: [
        rawArticle({ slug: 'heron-one', title: 'Heron optics one', section_slug: 'fiber', published_at: '2026-10-01T00:00:00Z' }),
        rawArticle({ locale: 'zh', slug: 'heron-zh', title: '激光 光学 切割', section_slug: 'fiber', published_at: '2026-10-01T00:00:00Z' }),
      ],
      listLimits: { minDocs: 1, maxBytes: 1 << 20 },
    });
  });
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
  });
  afterAll(() => dir.cleanup());

  it('start() starts every thread, and each builds its views of both locales, before any search', async () => {
    const { logger, lines } = memoryLogger('debug');
    engine = new PooledSqliteEngine(2, { ...setup(dbPath), logLevel: 'debug' }, logger);
    expect(engine.stats().threads).toBe(0);
    engine.start();
    expect(engine.stats().threads).toBe(2);
    await expect
      .poll(() => builtViews(lines).map((l) => `${l.thread}:${l.locale}`).sort(), { timeout: 15_000 })
      .toEqual(['0:en', '0:zh', '1:en', '1:zh']);
  });

  it('each thread rehearses queries of the common words of each locale after its start, and start() resolves after that', async () => {
    const { logger, lines } = memoryLogger('debug');
    engine = new PooledSqliteEngine(2, { ...setup(dbPath), logLevel: 'debug' }, logger);
    const rehearsed = () =>
      lines
        .map((l) => JSON.parse(l) as { msg: string; thread: number; queries: Record<string, number>; rounds: number; afterCollection: number })
        .filter((l) => l.msg === 'search thread rehearsed common queries');
    await engine.start();
    // A thread's log lines reach the pool before its 'ready': no polling needed.
    expect(rehearsed().map((l) => l.thread).sort()).toEqual([0, 1]);
    // Queries of the words the snapshot keeps champion lists of (every word of its articles
    // here), in both locales: Chinese words are not among the most common of all.
    for (const line of rehearsed()) {
      expect(line.queries.en).toBeGreaterThan(0);
      expect(line.queries.zh).toBeGreaterThan(0);
      // Ranked several times over: V8 optimizes the ranking code only after a while.
      expect(line.rounds).toBeGreaterThan(1);
      // And once more after the start's full collection, which left the next rankings slow.
      expect(line.afterCollection).toBe(1);
    }
  });

  it('an idle thread rebuilds its views when a sync commits, without waiting for a search', async () => {
    const { logger, lines } = memoryLogger('debug');
    engine = new PooledSqliteEngine(1, { ...setup(dbPath), logLevel: 'debug', refreshMs: 50 }, logger);
    engine.start();
    await expect.poll(() => builtViews(lines).length, { timeout: 15_000 }).toBe(2);
    const before = builtViews(lines).find((l) => l.locale === 'en')!.version;

    const db = openWriter(dbPath, { busyTimeoutMs: 5_000 });
    try {
      db.$client.prepare(`UPDATE snapshot_state SET version = version + 1 WHERE locale = 'en'`).run();
    } finally {
      db.$client.close();
    }
    // No search is sent: only the thread's own refresh can build this view.
    await expect
      .poll(() => builtViews(lines).filter((l) => l.locale === 'en').map((l) => l.version), { timeout: 15_000 })
      .toEqual([before, before + 1]);
    expect(engine.stats().threads).toBe(1);
    // It rehearsed again for the new snapshot, once: its code was optimized at its start.
    const rehearsals = () =>
      lines.map((l) => JSON.parse(l) as { msg: string; rounds?: number; afterCollection?: number }).filter((l) => l.msg === 'search thread rehearsed common queries');
    await expect.poll(rehearsals, { timeout: 15_000 }).toHaveLength(2);
    expect(rehearsals()[0]!.rounds).toBeGreaterThan(1);
    // No collection after a sync's one round: nothing to rehearse again.
    expect(rehearsals()[1]).toMatchObject({ rounds: 1, afterCollection: 0 });
  });

  it('a thread builds the view of every synced locale, even when another locale was never synced', async () => {
    const zhOnly = dir.path('zh-only.db');
    buildSnapshot(zhOnly, {
      sections: [{ ...rawSection({ slug: 'fiber', name: 'Fiber', position: 1 }), locale: 'zh' }],
      articles: [rawArticle({ locale: 'zh', slug: 'heron-zh', title: '激光 heron', section_slug: 'fiber', published_at: '2026-10-01T00:00:00Z' })],
    });
    const db = openWriter(zhOnly, { busyTimeoutMs: 5_000 });
    try {
      // en comes first in the loop: as if that locale had never been synced.
      db.$client.prepare(`DELETE FROM snapshot_state WHERE locale = 'en'`).run();
    } finally {
      db.$client.close();
    }
    const { logger, lines } = memoryLogger('debug');
    engine = new PooledSqliteEngine(1, { ...setup(zhOnly), logLevel: 'debug' }, logger);
    engine.start();
    await expect.poll(() => builtViews(lines).map((l) => l.locale), { timeout: 15_000 }).toEqual(['zh']);
  });

  it("leaves the snapshot's state to the API's store to log: a missing file is not logged once more per thread", async () => {
    const { logger, lines } = memoryLogger('debug');
    engine = new PooledSqliteEngine(2, { ...setup(dir.path('missing.db')), logLevel: 'debug' }, logger);
    engine.start();
    const pool = poolOf(engine);
    // A thread's log lines reach the pool before its 'ready'.
    await expect.poll(() => pool.slots.every((s) => s.ready), { timeout: 15_000 }).toBe(true);
    expect(lines.filter((l) => l.includes('snapshot unavailable'))).toEqual([]);
    const failed = await engine.search(undefined as unknown as StoreSession, query()).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ServiceUnavailableError);
  });

  it('started threads do not keep the process alive: a process that is done exits', () => {
    const script = [
      `const { WorkerPool } = await import(${JSON.stringify(pathToFileURL(`${REPO_ROOT}dist/src/search/sqlite/pool/worker-pool.js`).href)});`,
      `const { createLogger } = await import(${JSON.stringify(pathToFileURL(`${REPO_ROOT}dist/src/logger.js`).href)});`,
      `new WorkerPool(2, ${JSON.stringify(setup(dbPath))}, createLogger({ level: 'warn' })).start();`,
    ].join('\n');
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 10_000 });
    expect(run.signal, String(run.stderr)).toBeNull();
    expect(run.status).toBe(0);
  });

  it('a started thread that dies is replaced after a pause, not at once, and its count of failures resets once it is ready', async () => {
    engine = new PooledSqliteEngine(1, { ...setup(dbPath), refreshMs: 1e9 }, memoryLogger('fatal').logger);
    engine.start();
    const pool = poolOf(engine);
    const slot = pool.slots[0]!;
    await expect.poll(() => slot.ready && !slot.warming, { timeout: 15_000 }).toBe(true);
    const thread = slot.worker!;
    // As an out-of-memory kill would end it, sent by hand so the test does not race it.
    thread.emit('exit', 134);
    await thread.terminate();
    // A thread that cannot start would otherwise be restarted in a tight loop.
    expect(slot.worker).toBeUndefined();
    expect(slot.failures).toBe(1);
    expect(slot.respawn).toBeDefined();
    await expect.poll(() => slot.worker !== undefined && slot.ready, { timeout: 15_000 }).toBe(true);
    expect(slot.worker).not.toBe(thread);
    expect(slot.failures).toBe(0);
  });

  /** The pool inside the engine, and the slots' state, for the tests of refresh rounds. */
  type PoolInside = {
    slots: { worker?: Worker; task?: unknown; pendingId?: number; ready: boolean; warming: boolean; failures: number; respawn?: unknown }[];
    replaced: number;
    refreshRound(): void;
  };
  const poolOf = (e: PooledSqliteEngine) => (e as unknown as { pool: PoolInside }).pool;
  const query = (signal?: AbortSignal) =>
    ({ locale: 'en', q: 'heron', section: undefined, page: 1, limit: 20, now: Date.now(), signal }) as unknown as SearchQuery;

  it('a thread refreshing its views is not idle: a search goes to another thread', async () => {
    // Rounds only when the test asks for one.
    engine = new PooledSqliteEngine(2, { ...setup(dbPath), refreshMs: 1e9 }, memoryLogger().logger);
    engine.start();
    const pool = poolOf(engine);
    await expect.poll(() => pool.slots.every((s) => s.ready && !s.warming), { timeout: 15_000 }).toBe(true);

    pool.refreshRound();
    expect(pool.slots.map((s) => s.warming)).toEqual([true, false]);
    const answer = engine.search(undefined as unknown as StoreSession, query());
    expect(pool.slots[0]!.task).toBeUndefined();
    expect(pool.slots[1]!.task).toBeDefined();
    expect((await answer).total).toBe(1);
    // The round goes on to the other thread once the first is done.
    await expect.poll(() => pool.slots.every((s) => s.ready && !s.warming), { timeout: 15_000 }).toBe(true);
  });

  it('a search that passes its budget while its only thread refreshes is refused, and the thread is kept', async () => {
    engine = new PooledSqliteEngine(1, { ...setup(dbPath), refreshMs: 1e9 }, memoryLogger().logger);
    engine.start();
    const pool = poolOf(engine);
    await expect.poll(() => pool.slots[0]!.ready && !pool.slots[0]!.warming, { timeout: 15_000 }).toBe(true);
    const thread = pool.slots[0]!.worker;

    pool.refreshRound();
    const budget = new AbortController();
    const answer = engine.search(undefined as unknown as StoreSession, query(budget.signal)).then(
      () => 'answered',
      () => 'refused',
    );
    // Before the thread can say it is done: the search still waits for it.
    budget.abort(new Error('over budget'));
    expect(await answer).toBe('refused');
    expect(pool.replaced).toBe(0);
    expect(pool.slots[0]!.worker).toBe(thread);
    expect((await engine.search(undefined as unknown as StoreSession, query())).total).toBe(1);
  });
});

describe('a search thread that dies', () => {
  const pooled = onePooledThread('sqlite-pool-crash-', 'osprey-one', 'Osprey optics one');

  it('fails the search it held with 503 service_unavailable (the engine could not answer), and a new thread answers the next', async () => {
    const { api, key, engine } = pooled;
    const get = (q: string) => api().request.get('/api/v1/search').query({ q }).set('X-API-Key', key());
    expect((await get('osprey')).status).toBe(200);
    const pool = (engine() as unknown as { pool: { slots: { worker?: Worker }[] } }).pool;
    const thread = pool.slots[0]!.worker!;
    const query = { locale: 'en', q: 'osprey optics', section: undefined, page: 1, limit: 20, now: Date.now() } as unknown as SearchQuery;
    const search = engine().search(undefined as unknown as StoreSession, query);
    // The thread exits while it holds the search, as an out-of-memory kill would; the event is
    // sent by hand, before the thread could answer, so the test does not race it.
    thread.emit('exit', 134);
    const error = await search.then(
      () => undefined,
      (e: unknown) => e,
    );
    await thread.terminate();
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect(error).toMatchObject({ status: 503, code: 'service_unavailable' });
    // Another query (the first is cached): a new thread finds the article.
    const next = await get('optics');
    expect(next.status, next.text).toBe(200);
    expect(next.body.data.map((a: { slug: string }) => a.slug)).toEqual(['osprey-one']);
    expect(pool.slots[0]!.worker).toBeDefined();
    expect(pool.slots[0]!.worker).not.toBe(thread);
  });
});

/** A snapshot of one article, an API on it and a pool of one search thread, for one describe. */
function onePooledThread(prefix: string, slug: string, title: string) {
  const dir = tempDir(prefix);
  const dbPath = dir.path('snapshot.db');
  let api: TestApi;
  let key: string;
  let engine: PooledSqliteEngine;
  beforeAll(async () => {
    buildSnapshot(dbPath, {
      sections: [rawSection({ slug: 'fiber', name: 'Fiber', position: 1 })],
      articles: [rawArticle({ slug, title, section_slug: 'fiber', published_at: '2026-10-01T00:00:00Z' })],
    });
    key = addKey(dbPath).key;
    engine = new PooledSqliteEngine(1, setup(dbPath), memoryLogger('fatal').logger);
    api = await startApi({ databasePath: dbPath, clock: testClock('2026-11-01T12:00:00Z'), engine });
  });
  afterAll(async () => {
    await api.close();
    dir.cleanup();
  });
  return { dbPath, api: () => api, key: () => key, engine: () => engine };
}
