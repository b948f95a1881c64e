import { blob, index, integer, primaryKey, sql, sqliteTable, text, uniqueIndex } from '../sqlite/drizzle.js';

/*
 * The snapshot's schema. The worker writes sections, articles, snapshot_state and sync_runs;
 * the API only reads. Partner keys have their own database (keys-schema.ts). Timestamps are TEXT in the
 * API's own format, `YYYY-MM-DDTHH:MM:SSZ` (UTC, whole seconds), so they sort and compare as
 * strings and read well in the sqlite3 shell.
 *
 * The full-text index `articles_fts` is an FTS5 virtual table created by a hand-written
 * migration (drizzle does not model virtual tables); see src/search/sqlite/sqlite-fts.ts.
 */

export const sections = sqliteTable(
  'sections',
  {
    locale: text('locale').notNull(),
    slug: text('slug').notNull(),
    cmsId: text('cms_id').notNull(),
    name: text('name').notNull(),
    description: text('description'),
    active: integer('active', { mode: 'boolean' }).notNull(),
    position: integer('position').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.locale, t.slug] })],
);

export const articles = sqliteTable(
  'articles',
  {
    // Local row id: stable while the CMS record lives, so the search indexes can refer to it.
    id: integer('id').primaryKey({ autoIncrement: true }),
    locale: text('locale').notNull(),
    cmsId: text('cms_id').notNull(),
    slug: text('slug').notNull(),
    status: text('status').notNull(),
    title: text('title').notNull(),
    excerpt: text('excerpt').notNull(),
    body: text('body').notNull(),
    sectionSlug: text('section_slug'),
    author: text('author').notNull(),
    imageUrl: text('image_url'),
    imageAlt: text('image_alt'),
    imageCredit: text('image_credit'),
    imageCreditUrl: text('image_credit_url'),
    imageSourceUrl: text('image_source_url'),
    publishedAt: text('published_at'),
    updatedAt: text('updated_at').notNull(),
    url: text('url').notNull(),
    // Hash of everything above as the CMS sent it: an unchanged record is not rewritten.
    contentHash: text('content_hash').notNull(),
  },
  (t) => [
    uniqueIndex('articles_locale_cms_id').on(t.locale, t.cmsId),
    uniqueIndex('articles_locale_slug').on(t.locale, t.slug),
    // Serves the partner ordering (newest first, ties by slug) and covers what the visibility
    // index reads (exposureOrdering): building it then reads this index alone, not 100,000 rows
    // whose bodies spread them over the whole file (2.3-3.2 s -> 0.4-1.0 s at 110,000 articles,
    // on a loaded machine), which every search thread does after each sync.
    index('articles_exposure').on(t.locale, sql`${t.publishedAt} DESC`, t.slug, t.status, t.sectionSlug, t.updatedAt),
  ],
);

/**
 * Where keys lived before they got their own database. No longer read or written by the
 * service: `keys init` copies its rows into the keys database. Kept in the schema so that no
 * generated migration drops it (and with it the keys of a snapshot not yet imported).
 */
export const legacyApiKeys = sqliteTable('api_keys', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  partner: text('partner').notNull(),
  // The readable start of the key (e.g. `lsk_AbCd`), so editors can tell keys apart.
  prefix: text('prefix').notNull(),
  // SHA-256 of the whole key, hex. The key itself is never stored.
  hash: text('hash').notNull().unique(),
  createdAt: text('created_at').notNull(),
  revokedAt: text('revoked_at'),
});

/** One row per locale: when it was last synced and when its content last changed. */
export const snapshotState = sqliteTable('snapshot_state', {
  locale: text('locale').primaryKey(),
  syncedAt: text('synced_at').notNull(),
  changedAt: text('changed_at').notNull(),
  // Incremented on every commit that changes this locale's content; readers cache by it.
  version: integer('version').notNull(),
});

export const syncRuns = sqliteTable(
  'sync_runs',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    kind: text('kind').notNull(),
    status: text('status').notNull(),
    startedAt: text('started_at').notNull(),
    finishedAt: text('finished_at'),
    fetched: integer('fetched').notNull().default(0),
    upserted: integer('upserted').notNull().default(0),
    removed: integer('removed').notNull().default(0),
    rejected: integer('rejected').notNull().default(0),
    error: text('error'),
    // Who ran it, so a run left `running` by a killed process can be told from a live one.
    pid: integer('pid').notNull(),
    host: text('host').notNull(),
  },
  (t) => [index('sync_runs_started').on(t.startedAt)],
);

/** Small facts the worker keeps between runs, e.g. that a search index needs a rebuild. */
export const workerState = sqliteTable('worker_state', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updatedAt: text('updated_at').notNull(),
});

/**
 * The change feed: what partners could see change, per locale and slug. A row takes effect at
 * `effective_ms` (the sync's commit time, or a scheduled article's publication time) and is
 * ordered by (effective_ms, seq): a cursor is such a pair. Superseded rows are deleted by the
 * worker, so a slug has at most one row in effect and at most one scheduled for later.
 */
export const feedEntries = sqliteTable(
  'feed_entries',
  {
    // Never reused (AUTOINCREMENT): a cursor's seq stays meaningful after rows are deleted.
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    locale: text('locale').notNull(),
    slug: text('slug').notNull(),
    effectiveMs: integer('effective_ms').notNull(),
    kind: text('kind', { enum: ['upsert', 'delete'] }).notNull(),
    // What the partner saw (content hash and section name) on upserts; null on deletes.
    fingerprint: text('fingerprint'),
  },
  (t) => [
    // Serves the cursor reads: a poll with nothing new is one probe of this index.
    index('feed_entries_locale_position').on(t.locale, t.effectiveMs, t.seq),
    index('feed_entries_locale_slug').on(t.locale, t.slug, t.effectiveMs),
    index('feed_entries_locale_seq').on(t.locale, t.seq),
    // Pruning and the oldest retained delete, without scanning the whole catalogue's upserts.
    index('feed_entries_kind_effective').on(t.kind, t.effectiveMs),
  ],
);

/**
 * One row per locale whose feed has been built. `epoch` names this feed (a rebuilt snapshot
 * gets a new one, so older cursors are refused); `pending_ms` is set while a sync is about to
 * commit (readers hold scheduled entries back to it, see src/content/feed.ts); `pruned_*` is
 * the newest position whose delete was pruned (a cursor before it, from a read that started
 * before that delete was written, is refused: src/content/feed.ts).
 */
export const feedState = sqliteTable('feed_state', {
  locale: text('locale').primaryKey(),
  epoch: text('epoch').notNull(),
  pendingMs: integer('pending_ms'),
  prunedMs: integer('pruned_ms').notNull().default(0),
  prunedSeq: integer('pruned_seq').notNull().default(0),
});

/**
 * Champion lists of the embedded search engine (src/search/sqlite/common-lists.ts): for each of
 * the index's most common words, the ids of the articles it matches (anywhere, and in the
 * title), as the query `"word"*` would find them. Written by the worker in the transaction that
 * changes the index, so they always match it; read by the API's search threads instead of
 * reading the word's doclist (tens of milliseconds for a word in most articles).
 */
export const searchCommonLists = sqliteTable(
  'search_common_lists',
  {
    word: text('word').notNull(),
    field: text('field', { enum: ['all', 'title'] }).notNull(),
    // How many articles match: the list's length.
    docs: integer('docs').notNull(),
    // `bitmap`: little-endian 32-bit words, bit i of word w set for id 32w + i; `ids`: ascending
    // little-endian 32-bit ids. Whichever is smaller.
    encoding: text('encoding', { enum: ['bitmap', 'ids'] }).notNull(),
    ids: blob('ids', { mode: 'buffer' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.word, t.field] })],
);

/**
 * One row: whether the champion lists match the index. Triggers (migration 0004) clear `fresh`
 * on any write to articles or sections, whoever makes it (a fix made with SQL, another tool that writes
 * the snapshot); the worker sets it again once it has brought the lists up to date in the same
 * transaction. The search threads use the lists only while it is set.
 */
export const searchCommonListsState = sqliteTable('search_common_lists_state', {
  id: integer('id').primaryKey(),
  fresh: integer('fresh', { mode: 'boolean' }).notNull(),
});

export type SectionRow = typeof sections.$inferSelect;
export type ArticleRow = typeof articles.$inferSelect;
export type LegacyApiKeyRow = typeof legacyApiKeys.$inferSelect;
export type SnapshotStateRow = typeof snapshotState.$inferSelect;
export type SyncRunRow = typeof syncRuns.$inferSelect;
export type FeedEntryRow = typeof feedEntries.$inferSelect;
export type FeedStateRow = typeof feedState.$inferSelect;
