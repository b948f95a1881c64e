import type { SnapshotStore } from '../../db/snapshot/snapshot-store.js';
import { lastAttempt, lastSuccessfulCmsRun } from '../../db/snapshot/sync-runs.js';
import { statsOf, type ApiMetricSources, type CacheStats, type SearchStats } from '../../observability/api-metrics.js';
import type { SearchEngine } from '../../search/engine.js';
import { parseIsoToMs, type Clock } from '../../lib/time.js';
import { snapshotHealth } from './service-state.js';

/**
 * What the API's metrics read at each scrape. The snapshot and the sync runs come from the
 * database, so a one-shot `sync --once` (from cron) shows in the API's metrics as soon as it
 * is recorded; the cache and the search pool count for themselves through `stats()`, read
 * when they have one.
 */
export function metricSources(
  store: SnapshotStore,
  clock: Clock,
  maxAgeSeconds: number,
  parts: { cache: unknown; engine: SearchEngine },
): ApiMetricSources {
  const read = <T>(fn: (db: ReturnType<SnapshotStore['session']>['db']) => T): T | undefined => {
    try {
      return fn(store.session().db);
    } catch {
      // The store logs its own failures; a scrape during an outage just has no value.
      return undefined;
    }
  };
  const cache = statsOf<CacheStats>(parts.cache);
  const search = statsOf<SearchStats>(parts.engine);
  return {
    snapshotAgeSeconds: () => read((db) => snapshotHealth(db, clock(), maxAgeSeconds)?.age_seconds),
    sync: () =>
      read((db) => {
        const success = lastSuccessfulCmsRun(db);
        const attempt = lastAttempt(db);
        if (!success && !attempt) return undefined;
        return {
          lastSuccessAt: success?.finishedAt ? parseIsoToMs(success.finishedAt) : undefined,
          lastAttemptFailed: attempt?.status === 'failed',
        };
      }),
    cache: () => cache?.(),
    search: () => search?.(),
    searchUp: async () => (await parts.engine.health()).status === 'ok',
  };
}
