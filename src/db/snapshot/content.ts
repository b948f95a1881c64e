import type Database from 'better-sqlite3';
import type { Locale } from '../../locale.js';
import { statementsFor, type Db } from '../sqlite/sqlite-file.js';
import { EXPOSED_JOIN, EXPOSED_WHERE } from './exposure.js';
import type { SnapshotStateRow } from './schema.js';

/*
 * Read queries of the API. These run on every uncached request, so they are prepared once per
 * connection with better-sqlite3 directly instead of going through drizzle's query builder;
 * the column names are the schema's (src/db/snapshot/schema.ts).
 */

/** An article row with its section, as the serializers need it. */
export interface ArticleWithSection {
  id: number;
  locale: Locale;
  slug: string;
  title: string;
  excerpt: string;
  body: string;
  author: string;
  image_url: string | null;
  image_alt: string | null;
  image_credit: string | null;
  image_credit_url: string | null;
  image_source_url: string | null;
  published_at: string;
  updated_at: string;
  url: string;
  section_slug: string;
  section_name: string;
}

export interface SectionListRow {
  slug: string;
  name: string;
  description: string | null;
}

const ARTICLE_COLUMNS = `a.id, a.locale, a.slug, a.title, a.excerpt, a.body, a.author,
  a.image_url, a.image_alt, a.image_credit, a.image_credit_url, a.image_source_url,
  a.published_at, a.updated_at, a.url, a.section_slug, s.name AS section_name`;

// The exposure rule (exposure.ts), except for "published_at not in the future", which takes a parameter.

interface Statements {
  states: Database.Statement<[], SnapshotStateRow>;
  sections: Database.Statement<[string], SectionListRow>;
  ordering: Database.Statement<[string], [number, string, string, string]>;
  byIds: Database.Statement<[string, string], ArticleWithSection>;
  bySlug: Database.Statement<[string, string, string], ArticleWithSection>;
}

const prepared = statementsFor(
  (sqlite): Statements => ({
    states: sqlite.prepare(
      `SELECT locale, synced_at AS syncedAt, changed_at AS changedAt, version FROM snapshot_state`,
    ),
    sections: sqlite.prepare(
      `SELECT slug, name, description FROM sections WHERE locale = ? AND active = 1 ORDER BY position, slug`,
    ),
    ordering: sqlite
      .prepare<[string], [number, string, string, string]>(
        `SELECT a.id, a.published_at, a.section_slug, a.updated_at FROM articles a ${EXPOSED_JOIN}
         WHERE a.locale = ? AND ${EXPOSED_WHERE}
         ORDER BY a.published_at DESC, a.slug ASC`,
      )
      .raw(),
    byIds: sqlite.prepare(
      `SELECT ${ARTICLE_COLUMNS} FROM articles a ${EXPOSED_JOIN}
       WHERE a.id IN (SELECT value FROM json_each(?)) AND ${EXPOSED_WHERE} AND a.published_at <= ?`,
    ),
    bySlug: sqlite.prepare(
      `SELECT ${ARTICLE_COLUMNS} FROM articles a ${EXPOSED_JOIN}
       WHERE a.locale = ? AND a.slug = ? AND ${EXPOSED_WHERE} AND a.published_at <= ?`,
    ),
  }),
);

export function snapshotStates(db: Db): SnapshotStateRow[] {
  return prepared(db).states.all();
}

/** Active sections of a locale in editorial order. */
export function activeSections(db: Db, locale: Locale): SectionListRow[] {
  return prepared(db).sections.all(locale);
}

/**
 * Every article that is or will become exposed (published, in an active section), newest
 * first with ties by slug, as `[id, published_at, section_slug, updated_at]`. Articles scheduled in the
 * future are included: readers cut the list at "now", so they appear by themselves.
 */
export function exposureOrdering(db: Db, locale: Locale): IterableIterator<[number, string, string, string]> {
  return prepared(db).ordering.iterate(locale);
}

/** The exposed articles among `ids`, in no particular order. */
export function exposedArticlesByIds(db: Db, ids: readonly number[], nowIso: string): ArticleWithSection[] {
  if (ids.length === 0) return [];
  return prepared(db).byIds.all(JSON.stringify(ids), nowIso);
}

export function exposedArticleBySlug(
  db: Db,
  locale: Locale,
  slug: string,
  nowIso: string,
): ArticleWithSection | undefined {
  return prepared(db).bySlug.get(locale, slug, nowIso);
}

/** Runs `fn` in one read transaction, so that everything it reads comes from one commit. */
export function consistentRead<T>(db: Db, fn: () => T): T {
  return db.$client.transaction(fn).deferred();
}
