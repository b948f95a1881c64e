import type Database from 'better-sqlite3';
import type { Locale } from '../../locale.js';
import { statementsFor, type Db } from '../sqlite/connection.js';
import type { ArticleRecord, SectionRecord } from './records.js';

/*
 * The worker's writes to the snapshot, as plain verbs. Each must run inside the caller's
 * write transaction (writeTransaction in connection.ts): a sync commits all or nothing.
 */

interface Statements {
  sectionsOf: Database.Statement<[string], { slug: string; cms_id: string; name: string; description: string | null; active: number; position: number; updated_at: string }>;
  upsertSection: Database.Statement<unknown[]>;
  deleteSection: Database.Statement<[string, string]>;
  hashOf: Database.Statement<[string, string], { id: number; slug: string; content_hash: string }>;
  slugHolder: Database.Statement<[string, string, string], { id: number }>;
  deleteById: Database.Statement<[number]>;
  upsertArticle: Database.Statement<unknown[], { id: number }>;
  deleteByCmsId: Database.Statement<[string, string], { id: number; slug: string }>;
  idsInSection: Database.Statement<[string, string], { id: number }>;
  state: Database.Statement<[string], { version: number }>;
  upsertState: Database.Statement<[string, string, string, number]>;
  touchState: Database.Statement<[string, string]>;
}
const prepared = statementsFor(
  (sqlite): Statements => ({
    sectionsOf: sqlite.prepare(`SELECT slug, cms_id, name, description, active, position, updated_at FROM sections WHERE locale = ?`),
    upsertSection: sqlite.prepare(
      `INSERT INTO sections (locale, slug, cms_id, name, description, active, position, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (locale, slug) DO UPDATE SET cms_id = excluded.cms_id, name = excluded.name,
         description = excluded.description, active = excluded.active, position = excluded.position,
         updated_at = excluded.updated_at`,
    ),
    deleteSection: sqlite.prepare(`DELETE FROM sections WHERE locale = ? AND slug = ?`),
    hashOf: sqlite.prepare(`SELECT id, slug, content_hash FROM articles WHERE locale = ? AND cms_id = ?`),
    slugHolder: sqlite.prepare(`SELECT id FROM articles WHERE locale = ? AND slug = ? AND cms_id != ?`),
    deleteById: sqlite.prepare(`DELETE FROM articles WHERE id = ?`),
    upsertArticle: sqlite.prepare(
      `INSERT INTO articles (locale, cms_id, slug, status, title, excerpt, body, section_slug, author,
         image_url, image_alt, image_credit, image_credit_url, image_source_url,
         published_at, updated_at, url, content_hash)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (locale, cms_id) DO UPDATE SET slug = excluded.slug, status = excluded.status,
         title = excluded.title, excerpt = excluded.excerpt, body = excluded.body,
         section_slug = excluded.section_slug, author = excluded.author, image_url = excluded.image_url,
         image_alt = excluded.image_alt, image_credit = excluded.image_credit,
         image_credit_url = excluded.image_credit_url, image_source_url = excluded.image_source_url,
         published_at = excluded.published_at, updated_at = excluded.updated_at, url = excluded.url,
         content_hash = excluded.content_hash
       RETURNING id`,
    ),
    deleteByCmsId: sqlite.prepare(`DELETE FROM articles WHERE locale = ? AND cms_id = ? RETURNING id, slug`),
    idsInSection: sqlite.prepare(`SELECT id FROM articles WHERE locale = ? AND section_slug = ?`),
    state: sqlite.prepare(`SELECT version FROM snapshot_state WHERE locale = ?`),
    upsertState: sqlite.prepare(
      `INSERT INTO snapshot_state (locale, synced_at, changed_at, version) VALUES (?, ?, ?, ?)
       ON CONFLICT (locale) DO UPDATE SET synced_at = excluded.synced_at, changed_at = excluded.changed_at,
         version = excluded.version`,
    ),
    touchState: sqlite.prepare(`UPDATE snapshot_state SET synced_at = ? WHERE locale = ?`),
  }),
);

export interface SectionChanges {
  changed: boolean;
  /** Sections whose name changed: their articles' search entries must be rewritten. */
  renamed: string[];
  /** Sections added, removed, (de)activated or renamed: what partners see of their articles changed. */
  exposureChanged: string[];
  /**
   * Every stored section's name by slug once replaced, those kept because the CMS did not send
   * them validly included: what the search entries of articles written in this run carry.
   */
  names: Map<string, string>;
}

/**
 * Makes the locale's sections exactly `sections` (the CMS always sends all of them), or, with
 * `removeMissing: false`, only adds and updates.
 */
export function replaceSections(
  db: Db,
  locale: Locale,
  sections: SectionRecord[],
  options: { removeMissing: boolean } = { removeMissing: true },
): SectionChanges {
  const s = prepared(db);
  const before = new Map(s.sectionsOf.all(locale).map((row) => [row.slug, row]));
  const result: SectionChanges = { changed: false, renamed: [], exposureChanged: [], names: new Map() };
  for (const section of sections) {
    result.names.set(section.slug, section.name);
    const old = before.get(section.slug);
    before.delete(section.slug);
    const same =
      old &&
      old.cms_id === section.cmsId &&
      old.name === section.name &&
      old.description === section.description &&
      old.active === (section.active ? 1 : 0) &&
      old.position === section.position &&
      old.updated_at === section.updatedAt;
    if (same) continue;
    if (old && old.name !== section.name) result.renamed.push(section.slug);
    if (!old || old.name !== section.name || old.active !== (section.active ? 1 : 0)) result.exposureChanged.push(section.slug);
    s.upsertSection.run(locale, section.slug, section.cmsId, section.name, section.description, section.active ? 1 : 0, section.position, section.updatedAt);
    result.changed = true;
  }
  if (options.removeMissing) {
    for (const slug of before.keys()) {
      s.deleteSection.run(locale, slug);
      result.changed = true;
      result.exposureChanged.push(slug);
    }
  } else {
    for (const [slug, kept] of before) result.names.set(slug, kept.name);
  }
  return result;
}

/** The stored hash of a CMS record, to skip records that did not change. */
export function storedHash(db: Db, locale: Locale, cmsId: string): string | undefined {
  return prepared(db).hashOf.get(locale, cmsId)?.content_hash;
}

export interface UpsertOutcome {
  id: number;
  /** False when the article is new to the snapshot (its search entry need not be replaced). */
  existed: boolean;
  /** Rows removed because another CMS record now holds their slug. */
  displaced: number[];
  /** The slug the record had before, when it was stored under another one (a rename). */
  previousSlug: string | undefined;
}

/** Inserts or updates one article by its CMS id; returns its row id. */
export function upsertArticle(db: Db, article: ArticleRecord, contentHash: string): UpsertOutcome {
  const s = prepared(db);
  // The CMS guarantees slugs unique per locale at any instant, but a slug can move from one
  // record to another between syncs: the newer record takes it.
  const displaced = s.slugHolder.all(article.locale, article.slug, article.cmsId).map((r) => r.id);
  for (const id of displaced) s.deleteById.run(id);
  const before = s.hashOf.get(article.locale, article.cmsId);
  const existed = before !== undefined;
  const image = article.image;
  const row = s.upsertArticle.get(
    article.locale, article.cmsId, article.slug, article.status, article.title, article.excerpt,
    article.body, article.sectionSlug, article.author,
    image?.url ?? null, image?.alt ?? null, image?.credit ?? null, image?.creditUrl ?? null, image?.sourceUrl ?? null,
    article.publishedAt, article.updatedAt, article.url, contentHash,
  ) as { id: number };
  const previousSlug = before && before.slug !== article.slug ? before.slug : undefined;
  return { id: row.id, existed, displaced, previousSlug };
}

export interface RemovedArticle {
  id: number;
  slug: string;
}

/** Removes one article by CMS id; returns the removed row, if there was one. */
export function removeArticle(db: Db, locale: Locale, cmsId: string): RemovedArticle | undefined {
  return prepared(db).deleteByCmsId.get(locale, cmsId);
}

/** Removes every article of a locale whose CMS id is not in the temp table `keepTable`. */
export function removeArticlesNotIn(db: Db, locale: Locale, keepTable: string): RemovedArticle[] {
  return db.$client
    .prepare<[string, string], RemovedArticle>(
      `DELETE FROM articles WHERE locale = ? AND cms_id NOT IN (SELECT cms_id FROM ${keepTable} WHERE locale = ?) RETURNING id, slug`,
    )
    .all(locale, locale);
}

/** The slugs of a locale's articles in any of these sections: one pass over the articles. */
export function articleSlugsInSections(db: Db, locale: Locale, sectionSlugs: readonly string[]): string[] {
  if (sectionSlugs.length === 0) return [];
  return db.$client
    .prepare<[string, string], { slug: string }>(
      `SELECT slug FROM articles WHERE locale = ? AND section_slug IN (SELECT value FROM json_each(?))`,
    )
    .all(locale, JSON.stringify(sectionSlugs))
    .map((r) => r.slug);
}

export function articleIdsInSection(db: Db, locale: Locale, sectionSlug: string): number[] {
  return prepared(db).idsInSection.all(locale, sectionSlug).map((r) => r.id);
}

/**
 * Records a successful sync of a locale. When its content changed, the version moves on and
 * changed_at is set: readers rebuild their views and partners' caches revalidate.
 */
export function markLocaleSynced(db: Db, locale: Locale, nowIso: string, changed: boolean): void {
  const s = prepared(db);
  const current = s.state.get(locale);
  if (!current) s.upsertState.run(locale, nowIso, nowIso, 1);
  else if (changed) s.upsertState.run(locale, nowIso, nowIso, current.version + 1);
  else s.touchState.run(nowIso, locale);
}

/**
 * Marks every locale's content as changed without a sync (the search index was rebuilt):
 * readers drop what they cached from the old index, and Last-Modified moves, since search
 * results may differ (a repaired index); lists revalidate once, with the same bytes and ETag.
 * synced_at stays: the CMS was not read.
 */
export function markAllChanged(db: Db, nowIso: string): void {
  db.$client.prepare('UPDATE snapshot_state SET version = version + 1, changed_at = ?').run(nowIso);
}
