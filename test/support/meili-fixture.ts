import { randomBytes } from 'node:crypto';
import type { Meilisearch } from 'meilisearch';
import { openWriter } from '../../src/db/sqlite/connection.js';
import { LOCALES, type Locale } from '../../src/locale.js';
import type { Logger } from '../../src/logger.js';
import { createMeiliClient, indexUid } from '../../src/search/meilisearch/client.js';
import { MeilisearchEngine } from '../../src/search/meilisearch/engine.js';
import { MeilisearchIndexer } from '../../src/search/meilisearch/indexer.js';
import { loadMeiliIndexConfig, type MeiliIndexConfig } from '../../src/search/meilisearch/settings.js';
import { markUnsynced } from '../../src/search/meilisearch/unsynced.js';
import type { Clock } from '../../src/lib/time.js';
import { memoryLogger, startApi, type TestApi } from './api.js';

/*
 * The service's own Meilisearch classes, wired for tests against the fake or a real server.
 * Every fixture works under its own index prefix (`test_<label>_<random>`), so that several
 * test files, or several people, can share one real Meilisearch; cleanup() deletes them.
 */

export interface MeiliTarget {
  /** `http://127.0.0.1:7700`, or the fake's url. */
  host: string;
  /** The key the fixture's own client, and by default the engine and the indexer, use. */
  apiKey?: string | undefined;
  /** The API's key (a search-only key), when it differs. */
  searchKey?: string | undefined;
  /** The worker's key (an admin key), when it differs. */
  adminKey?: string | undefined;
}

/** A fresh prefix per fixture, valid as MEILI_INDEX_PREFIX and as an index uid. */
export function uniqueIndexPrefix(label = 'run'): string {
  return `test_${label.replace(/[^A-Za-z0-9_-]/g, '_')}_${randomBytes(5).toString('hex')}`;
}

type Tunable = 'batchSize' | 'batchBytes' | 'taskTimeoutMs' | 'taskTimeoutMsPerMb' | 'uploadTimeoutMsPerMb';

/** meilisearch.config.json as shipped, with test-sized numbers where given. */
export function testIndexConfig(overrides: Partial<Pick<MeiliIndexConfig, Tunable>> = {}): MeiliIndexConfig {
  const shipped = loadMeiliIndexConfig();
  return {
    settings: (locale) => shipped.settings(locale),
    searchLocales: (locale) => shipped.searchLocales(locale),
    batchSize: overrides.batchSize ?? shipped.batchSize,
    batchBytes: overrides.batchBytes ?? shipped.batchBytes,
    taskTimeoutMs: overrides.taskTimeoutMs ?? shipped.taskTimeoutMs,
    taskTimeoutMsPerMb: overrides.taskTimeoutMsPerMb ?? shipped.taskTimeoutMsPerMb,
    uploadTimeoutMsPerMb: overrides.uploadTimeoutMsPerMb ?? shipped.uploadTimeoutMsPerMb,
  };
}

export interface MeiliFixture {
  readonly target: MeiliTarget;
  readonly prefix: string;
  /** A client of its own, for looking at the indexes; the engine and indexer get their own. */
  readonly client: Meilisearch;
  /** Live index uid of a locale under this fixture's prefix. */
  uid(locale: Locale): string;
  /** The API's engine, as createSearchEngine builds it (the request timeout is MEILI_TIMEOUT_MS). */
  engine(options?: { timeoutMs?: number; logger?: Logger; config?: MeiliIndexConfig }): MeilisearchEngine;
  /** The worker's indexer, as createSearchIndexer builds it. */
  indexer(options?: { timeoutMs?: number; logger?: Logger; config?: MeiliIndexConfig }): MeilisearchIndexer;
  /** Builds both locales' indexes from a snapshot file, as a full sync or `--reindex` does. */
  indexSnapshot(dbPath: string, indexer?: MeilisearchIndexer): Promise<{ documents: number }>;
  /** Deletes every index under the prefix (live, `_next`) and their finished tasks. */
  cleanup(): Promise<void>;
}

export function meiliFixture(target: MeiliTarget, options: { label?: string; prefix?: string } = {}): MeiliFixture {
  const prefix = options.prefix ?? uniqueIndexPrefix(options.label);
  const connect = (timeoutMs: number, apiKey = target.apiKey) => createMeiliClient({ host: target.host, apiKey, timeoutMs });
  const client = connect(10_000);
  const quiet = () => memoryLogger('warn').logger;

  const fixture: MeiliFixture = {
    target,
    prefix,
    client,
    uid: (locale) => indexUid(prefix, locale),
    engine: ({ timeoutMs = 2_000, logger = quiet(), config = testIndexConfig() } = {}) =>
      new MeilisearchEngine(connect(timeoutMs, target.searchKey ?? target.apiKey), prefix, config, logger),
    indexer: ({ timeoutMs = 10_000, logger = quiet(), config = testIndexConfig({ taskTimeoutMs: 60_000 }) } = {}) =>
      new MeilisearchIndexer({ host: target.host, apiKey: target.adminKey ?? target.apiKey, timeoutMs }, prefix, config, logger),
    async indexSnapshot(dbPath, indexer = fixture.indexer()) {
      const db = openWriter(dbPath, { busyTimeoutMs: 5_000 });
      try {
        return await indexer.rebuild(db);
      } finally {
        db.$client.close();
      }
    },
    async cleanup() {
      const ours = (uid: string) => uid.startsWith(`${prefix}_`);
      const { results } = await client.getRawIndexes({ limit: 1_000 });
      const uids = results.map((i) => i.uid).filter(ours);
      for (const uid of uids) {
        const task = await client.deleteIndex(uid).waitTask({ timeout: 30_000, interval: 20 });
        if (task.status !== 'succeeded') throw new Error(`could not delete test index ${uid}: ${JSON.stringify(task.error)}`);
      }
      const known = LOCALES.flatMap((l) => [indexUid(prefix, l), `${indexUid(prefix, l)}_next`]);
      await client.tasks
        .deleteTasks({ statuses: ['succeeded', 'failed', 'canceled'], indexUids: [...new Set([...known, ...uids])] })
        .waitTask({ timeout: 30_000, interval: 20 });
    },
  };
  return fixture;
}

/** What the shared search contract (test/search/contract/engine-contract.ts) needs from an engine. */
export interface EngineSetup {
  startApi(dbPath: string, clock: Clock): Promise<TestApi>;
  /** Makes the engine's index follow the snapshot file (a no-op for the embedded engine). */
  index(dbPath: string): Promise<void>;
  /**
   * Records what a sync that changed these articles in the snapshot, then failed to update the
   * engine's index, leaves behind (a no-op for the embedded engine, written in the same transaction).
   */
  missedUpdate?(dbPath: string, locale: Locale, ids: number[]): Promise<void>;
  cleanup(): Promise<void>;
}

/** The contract's setup for Meilisearch at `target`; `after` runs once the indexes are gone. */
export function meiliEngineSetup(target: MeiliTarget, options: { label: string; after?: () => Promise<void> }): EngineSetup {
  const meili = meiliFixture(target, { label: options.label });
  return {
    startApi: (dbPath, clock) => startApi({ databasePath: dbPath, clock, engine: meili.engine({ timeoutMs: 10_000 }) }),
    index: async (dbPath) => {
      await meili.indexSnapshot(dbPath);
    },
    // What MeilisearchIndexer.update writes before it pushes changes, and leaves when it fails.
    missedUpdate: async (dbPath, locale, ids) => {
      const db = openWriter(dbPath, { busyTimeoutMs: 5_000 });
      try {
        markUnsynced(db, locale, ids, new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
      } finally {
        db.$client.close();
      }
    },
    async cleanup() {
      try {
        await meili.cleanup();
      } finally {
        await options.after?.();
      }
    },
  };
}
