import { writeTransaction, type Db } from '../src/db/sqlite/connection.js';
import { ensureFeed, pruneFeedDeletes, recordFeedChanges, setFeedPending } from '../src/db/snapshot/feed-write.js';
import type { SectionRecord } from '../src/db/snapshot/records.js';
import {
  articleIdsInSection,
  articleSlugsInSections,
  markLocaleSynced,
  removeArticle,
  removeArticlesNotIn,
  replaceSections,
  upsertArticle,
} from '../src/db/snapshot/snapshot-write.js';
import type { Locale } from '../src/locale.js';
import { formatUtcSeconds } from '../src/lib/time.js';
import {
  beginIndexChanges,
  finishIndexChanges,
  indexArticle,
  reindexArticles,
  unindexArticle,
  type IndexChanges,
} from '../src/search/sqlite/sqlite-index.js';
import type { CommonListsRefresh, ListLimits } from '../src/search/sqlite/common-lists.js';
import { STAGING_TABLE, type Staging } from './staging.js';

export interface LocaleInput {
  locale: Locale;
  /** Every section of the locale, as the CMS sent them. */
  sections: SectionRecord[];
  /**
   * `full`: articles not staged are gone and get removed (unless `removeMissing` is false,
   * when the listing could not be trusted to be complete). `incremental`: only staged
   * removals are removed.
   */
  mode: 'full' | 'incremental';
  removeMissing: boolean;
  /** Some sections were rejected: keep stored sections the CMS did not send validly. */
  keepSections?: boolean;
}

export interface LocaleOutcome {
  upserted: number;
  removed: number;
  /** Row ids written or removed, for the search index that follows the snapshot. */
  upsertedIds: number[];
  removedIds: number[];
  changed: boolean;
  /** Change feed rows written (upserts and deletes) and retained deletes pruned. */
  feed: { upserts: number; deletes: number; pruned: number; ms: number };
}

export interface ApplyOptions {
  /** The commit time of the change feed's entries (epoch ms); `nowIso` by default. */
  nowMs?: number;
  /** Deletes that took effect longer ago than this are pruned from the feed; never when absent. */
  feedRetentionMs?: number;
  /**
   * Read once the writes are done, just before the commit: each locale's synced_at and
   * changed_at (Last-Modified). A reader during the apply still saw the old content, so the
   * change must not be dated before that reader (a full sync's apply takes many seconds).
   * `nowIso` when absent.
   */
  committingAt?: () => number;
  /** Which words get champion lists (SEARCH_LISTS_*); the defaults when absent. */
  listLimits?: ListLimits;
  /** Hears how the embedded engine's champion lists followed the writes, and in how many ms. */
  commonLists?: (refresh: CommonListsRefresh & { ms: number }) => void;
}

/**
 * Applies a staged sync to the snapshot in one write transaction: all locales or nothing,
 * so readers see either the previous snapshot or the new one, never a mix. Partner keys are
 * not touched. Returns what changed per locale.
 */
export function applyStaged(
  db: Db,
  staging: Staging,
  inputs: LocaleInput[],
  nowIso: string,
  options: ApplyOptions = {},
): Map<Locale, LocaleOutcome> {
  const nowMs = options.nowMs ?? Date.parse(nowIso);
  return writeTransaction(db, () => {
    const changes = beginIndexChanges(db, options.listLimits);
    const outcomes = new Map<Locale, LocaleOutcome>();
    for (const input of inputs) outcomes.set(input.locale, applyLocale(db, staging, changes, input, { ...options, nowMs }));
    // A full sync also picks the common words anew (a few seconds at 110,000 articles); an
    // incremental one updates the lists of the articles it changed.
    if (inputs.some((input) => input.mode === 'full')) changes.wholeIndex();
    const listsStarted = performance.now();
    const refresh = finishIndexChanges(db, changes);
    options.commonLists?.({ ...refresh, ms: performance.now() - listsStarted });
    const committedIso = options.committingAt ? formatUtcSeconds(options.committingAt()) : nowIso;
    for (const [locale, outcome] of outcomes) markLocaleSynced(db, locale, committedIso, outcome.changed);
    // The pending mark (set before this transaction, see run-sync.ts) goes with the commit.
    setFeedPending(db, null);
    return outcomes;
  });
}

function applyLocale(db: Db, staging: Staging, changes: IndexChanges, input: LocaleInput, options: ApplyOptions & { nowMs: number }): LocaleOutcome {
  const { locale } = input;
  const sectionChanges = replaceSections(db, locale, input.sections, { removeMissing: !input.keepSections });
  const sectionNames = sectionChanges.names;
  const upserted = new Set<number>();
  const removed = new Set<number>();
  // Slugs whose exposure may have changed: the feed compares them after the writes.
  const touched = new Set<string>();

  // Articles first, then their search entries: interleaving the two kinds of writes in one
  // large transaction makes them evict each other's pages from SQLite's cache.
  const written = new Map<string, { id: number; existed: boolean }>();
  for (const staged of staging.upserts(locale)) {
    const { id, existed, displaced, previousSlug } = upsertArticle(db, staged.record, staged.hash);
    touched.add(staged.record.slug);
    if (previousSlug !== undefined) touched.add(previousSlug);
    for (const other of displaced) {
      unindexArticle(db, changes, other);
      removed.add(other);
    }
    written.set(staged.cmsId, { id, existed });
    upserted.add(id);
  }
  for (const staged of staging.upserts(locale)) {
    const { id, existed } = written.get(staged.cmsId)!;
    const sectionName = sectionNames.get(staged.record.sectionSlug ?? '') ?? '';
    indexArticle(db, changes, id, staged.fts, sectionName, existed);
  }

  // A record's own status wins: one the CMS listed (even under status=published) with another
  // status is taken down, on full syncs too. Then, on a provable full listing, what it lacks.
  const gone = staging.removals(locale).flatMap((cmsId) => removeArticle(db, locale, cmsId) ?? []);
  if (input.mode === 'full' && input.removeMissing) gone.push(...removeArticlesNotIn(db, locale, STAGING_TABLE));
  for (const { id, slug } of gone) {
    unindexArticle(db, changes, id);
    removed.add(id);
    touched.add(slug);
  }
  const feedStarted = performance.now();
  const fresh = ensureFeed(db, locale);
  // A new feed, and every full sync, reconcile the whole locale: the feed then catches up with
  // any change made to the snapshot outside a sync of this version (an older worker after a
  // rollback, a restored backup, a manual fix), so no such change can bypass partners' mirrors.
  // An incremental sync compares only what it touched, and the articles of each section shown,
  // hidden or renamed, whose exposure changed with it.
  const whole = fresh || input.mode === 'full';
  if (!whole) for (const slug of articleSlugsInSections(db, locale, sectionChanges.exposureChanged)) touched.add(slug);
  const recorded = recordFeedChanges(db, locale, whole ? 'all' : touched, options.nowMs);
  const feed = { ...recorded, pruned: 0, ms: 0 };
  if (options.feedRetentionMs !== undefined) {
    feed.pruned = pruneFeedDeletes(db, locale, options.nowMs - options.feedRetentionMs);
  }
  feed.ms = performance.now() - feedStarted;

  // A renamed section changes the searchable text of every article in it: their search
  // entries are rewritten (and reported, so an external index follows), though the articles
  // themselves did not change.
  const reindexed: number[] = [];
  for (const slug of sectionChanges.renamed) {
    const ids = articleIdsInSection(db, locale, slug).filter((id) => !upserted.has(id));
    reindexArticles(db, changes, ids, sectionNames.get(slug) ?? '');
    reindexed.push(...ids);
  }

  // Feed rows alone (a change made outside a sync, caught up here) change what partners read.
  const changed = sectionChanges.changed || upserted.size > 0 || removed.size > 0 || feed.upserts + feed.deletes + feed.pruned > 0;
  return {
    upserted: upserted.size,
    removed: removed.size,
    upsertedIds: [...upserted, ...reindexed],
    removedIds: [...removed].filter((id) => !upserted.has(id)),
    changed,
    feed,
  };
}
