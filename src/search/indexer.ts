import type { Db } from '../db/sqlite/connection.js';
import type { Locale } from '../locale.js';

/** What changed in one locale of the snapshot, by article row id. */
export interface LocaleChanges {
  upsertedIds: number[];
  removedIds: number[];
}

/**
 * An external search index that follows the snapshot (Meilisearch). The worker calls it after
 * each commit; the embedded FTS index needs none, it is written in the same transaction.
 * Errors are thrown with a one-line message for the operator.
 */
export interface SearchIndexer {
  readonly name: string;
  /** Pushes one sync's changes to the live indexes. */
  update(db: Db, changes: Map<Locale, LocaleChanges>, signal?: AbortSignal): Promise<void>;
  /**
   * Builds every locale's index afresh from the snapshot and swaps it in atomically. `changes`,
   * when a sync's commit is behind the rebuild, are the ids the live index lags on meanwhile.
   */
  rebuild(db: Db, signal?: AbortSignal, changes?: Map<Locale, LocaleChanges>): Promise<{ documents: number }>;
  /**
   * A full sync: makes every index equal to the snapshot by sending only the difference, and
   * rebuilds only what must be (missing index, other settings or engine version). `changes`
   * go to a live index that is rebuilt anyway, so it keeps serving them meanwhile.
   */
  reconcile(db: Db, changes: Map<Locale, LocaleChanges>, signal?: AbortSignal): Promise<{ sent: number; deleted: number; rebuilt: Locale[] }>;
}
