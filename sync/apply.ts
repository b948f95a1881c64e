import { writeTransaction, type Db } from '../src/db/connection.js';
import type { SectionRecord } from '../src/db/records.js';
import {
  articleIdsInSection,
  markLocaleSynced,
  removeArticle,
  removeArticlesNotIn,
  replaceSections,
  upsertArticle,
} from '../src/db/snapshot-write.js';
import type { Locale } from '../src/locale.js';
import { indexArticle, reindexArticles, unindexArticle } from '../src/search/sqlite-index.js';
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
}

/**
 * Applies a staged sync to the snapshot in one write transaction: all locales or nothing,
 * so readers see either the previous snapshot or the new one, never a mix. Partner keys are
 * not touched. Returns what changed per locale.
 */
export function applyStaged(db: Db, staging: Staging, inputs: LocaleInput[], nowIso: string): Map<Locale, LocaleOutcome> {
  return writeTransaction(db, () => {
    const outcomes = new Map<Locale, LocaleOutcome>();
    for (const input of inputs) outcomes.set(input.locale, applyLocale(db, staging, input, nowIso));
    return outcomes;
  });
}

function applyLocale(db: Db, staging: Staging, input: LocaleInput, nowIso: string): LocaleOutcome {
  const { locale } = input;
  const sectionChanges = replaceSections(db, locale, input.sections, { removeMissing: !input.keepSections });
  const sectionNames = new Map(input.sections.map((s) => [s.slug, s.name]));
  const upserted = new Set<number>();
  const removed = new Set<number>();

  // Articles first, then their search entries: interleaving the two kinds of writes in one
  // large transaction makes them evict each other's pages from SQLite's cache.
  const written = new Map<string, { id: number; existed: boolean }>();
  for (const staged of staging.upserts(locale)) {
    const { id, existed, displaced } = upsertArticle(db, staged.record, staged.hash);
    for (const other of displaced) {
      unindexArticle(db, other);
      removed.add(other);
    }
    written.set(staged.cmsId, { id, existed });
    upserted.add(id);
  }
  for (const staged of staging.upserts(locale)) {
    const { id, existed } = written.get(staged.cmsId)!;
    const sectionName = sectionNames.get(staged.record.sectionSlug ?? '') ?? '';
    indexArticle(db, id, staged.fts, sectionName, existed);
  }

  const gone =
    input.mode === 'full'
      ? input.removeMissing
        ? removeArticlesNotIn(db, locale, STAGING_TABLE)
        : []
      : staging.removals(locale).flatMap((cmsId) => removeArticle(db, locale, cmsId) ?? []);
  for (const id of gone) {
    unindexArticle(db, id);
    removed.add(id);
  }

  // A renamed section changes the searchable text of every article in it: their search
  // entries are rewritten (and reported, so an external index follows), though the articles
  // themselves did not change.
  const reindexed: number[] = [];
  for (const slug of sectionChanges.renamed) {
    const ids = articleIdsInSection(db, locale, slug).filter((id) => !upserted.has(id));
    reindexArticles(db, ids, sectionNames.get(slug) ?? '');
    reindexed.push(...ids);
  }

  const changed = sectionChanges.changed || upserted.size > 0 || removed.size > 0;
  markLocaleSynced(db, locale, nowIso, changed);
  return {
    upserted: upserted.size,
    removed: removed.size,
    upsertedIds: [...upserted, ...reindexed],
    removedIds: [...removed].filter((id) => !upserted.has(id)),
    changed,
  };
}
