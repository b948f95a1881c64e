import type { StoreSession } from '../../../db/snapshot/snapshot-store.js';
import type { Logger } from '../../../logger.js';
import type { EngineHealth, SearchEngine, SearchPage, SearchQuery } from '../../engine.js';
import type { WorkerSetup } from './protocol.js';
import { WorkerPool } from './worker-pool.js';

/**
 * The embedded engine, run in a pool of worker threads so that ranking never blocks the API's
 * event loop. Each thread applies the exposure rules itself (its own view of the snapshot), so
 * only plain data crosses: the query in, a page of ids and the total out. The rows are then
 * read on the main thread (src/content/search.ts), as for every engine.
 */
export class PooledSqliteEngine implements SearchEngine {
  readonly name = 'sqlite' as const;
  readonly followsSnapshot = true;
  private readonly pool: WorkerPool;

  constructor(threads: number, setup: WorkerSetup, logger: Logger) {
    this.pool = new WorkerPool(threads, setup, logger);
  }

  search(_session: StoreSession, query: SearchQuery): Promise<SearchPage> {
    const { locale, q, section, within, page, limit, now, publishedAfterMs, publishedBeforeMs, order } = query;
    return this.pool.run({ locale, q, section, within, page, limit, now, publishedAfterMs, publishedBeforeMs, order: order ?? 'relevance' }, query.signal);
  }

  async health(): Promise<EngineHealth> {
    return { engine: this.name, status: 'ok' };
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  start(): Promise<void> {
    return this.pool.start();
  }

  stats(): Record<string, number> {
    const s = this.pool.stats();
    return {
      threads: s.workers,
      threads_busy: s.busy,
      threads_replaced: s.replaced,
      pool_waiting: s.waiting,
      ranked_cache_hits: s.cache.hits,
      ranked_cache_misses: s.cache.misses,
      ranked_cache_bytes: s.cache.bytes,
      ranked_cache_entries: s.cache.entries,
    };
  }
}
