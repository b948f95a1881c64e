import type { ApiConfig } from '../config/api.js';
import type { SearchConfig } from '../config/search.js';
import type { Logger } from '../logger.js';
import { AdmittedEngine } from './admitted-engine.js';
import type { SearchEngine } from './engine.js';
import type { SearchIndexer } from './indexer.js';
import { createMeiliClient } from './meilisearch/client.js';
import { MeilisearchEngine } from './meilisearch/engine.js';
import { MeilisearchIndexer } from './meilisearch/indexer.js';
import { loadMeiliIndexConfig } from './meilisearch/settings.js';
import { PooledSqliteEngine } from './sqlite/pool/pooled-engine.js';
import { SqliteFtsEngine } from './sqlite/sqlite-fts.js';

/** The bare search engine as configured, run on the calling thread (tests, tools). */
export function createSearchEngine(config: SearchConfig, logger: Logger): SearchEngine {
  if (!config.meilisearch) return new SqliteFtsEngine();
  const { host, apiKey, timeoutMs, indexPrefix } = config.meilisearch;
  const engine = new MeilisearchEngine(createMeiliClient({ host, apiKey, timeoutMs }), indexPrefix, loadMeiliIndexConfig(), logger);
  // The version check at start-up: in the background, the API starts whatever Meilisearch says.
  void engine.verifyServer();
  return engine;
}

/**
 * The API's search engine: the embedded engine in a pool of worker threads (or Meilisearch),
 * behind admission control either way.
 */
export function createApiSearchEngine(config: ApiConfig, logger: Logger): AdmittedEngine {
  const runtime = config.searchRuntime;
  const inner =
    config.search.engine === 'sqlite'
      ? new PooledSqliteEngine(
          runtime.workers,
          {
            databasePath: config.databasePath,
            busyTimeoutMs: config.busyTimeoutMs,
            ranked: { cacheBytes: runtime.cacheBytesPerWorker, rankAllMax: runtime.rankAllMax, commonMin: runtime.commonMin, termBytes: runtime.termBytesPerWorker },
            nice: runtime.workerNice,
            logLevel: config.logLevel,
          },
          logger,
        )
      : createSearchEngine(config.search, logger);
  return new AdmittedEngine(inner, runtime);
}

/**
 * The external index the worker keeps in step with the snapshot, if any. The embedded FTS
 * index needs none: it is written in the snapshot's own transactions.
 */
export function createSearchIndexer(config: SearchConfig, logger: Logger): SearchIndexer | undefined {
  if (!config.meilisearch) return undefined;
  const { host, apiKey, timeoutMs, indexPrefix } = config.meilisearch;
  return new MeilisearchIndexer({ host, apiKey, timeoutMs }, indexPrefix, loadMeiliIndexConfig(), logger);
}
