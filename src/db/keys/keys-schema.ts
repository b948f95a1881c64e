import { integer, primaryKey, sqliteTable, text } from '../sqlite/drizzle.js';

/*
 * The keys database: partners' API keys, apart from the snapshot. The snapshot can be rebuilt
 * from the CMS at any time; these rows cannot, so they live in their own file with its own
 * migrations (src/db/keys/migrations), written by the editors' CLI and read by the API (which
 * writes only last_used_at). Timestamps are TEXT `YYYY-MM-DDTHH:MM:SSZ`, as in the snapshot,
 * so they sort and compare as strings.
 */

export const apiKeys = sqliteTable('api_keys', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  partner: text('partner').notNull(),
  // The readable start of the key (e.g. `lsk_AbCd`), so editors can tell keys apart.
  prefix: text('prefix').notNull(),
  // SHA-256 of the whole key, hex. The key itself is never stored.
  hash: text('hash').notNull().unique(),
  createdAt: text('created_at').notNull(),
  revokedAt: text('revoked_at'),
  // From this instant on the key answers 401 expired_api_key; null = never.
  expiresAt: text('expires_at'),
  // Recorded by the API at most once a minute per key, so accurate to about a minute.
  lastUsedAt: text('last_used_at'),
  // The key's own request rate; null = the API's configured default.
  rateLimitPerMinute: integer('rate_limit_per_minute'),
  // Set by `rotate`: the key that replaces this one (which then expires after the overlap).
  replacedBy: integer('replaced_by'),
  // The key's scope (src/keys/scope.ts): comma-separated locales and section slugs, null = all.
  scopeLocales: text('scope_locales'),
  scopeSections: text('scope_sections'),
  // 0 for a key that never had a scope; each scope change adds one (a row in key_scope_changes).
  scopeVersion: integer('scope_version').notNull().default(0),
});

export type KeyRow = typeof apiKeys.$inferSelect;

/*
 * Every scope a key has had, by version: a change-feed cursor names the version its partner's
 * copy was built under, so the feed can send what entered and what left the scope since
 * (src/content/scoped-feed.ts). Never pruned: a few rows per key. Version 0 (never stored) is
 * the whole catalogue.
 */
export const keyScopeChanges = sqliteTable(
  'key_scope_changes',
  {
    keyId: integer('key_id').notNull(),
    version: integer('version').notNull(),
    locales: text('locales'),
    sections: text('sections'),
    changedAt: text('changed_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.version] })],
);

export type KeyScopeChangeRow = typeof keyScopeChanges.$inferSelect;

/*
 * Usage per key and UTC day (docs/editors.md#usage; decision 0067), written by the API in the
 * background (src/db/keys/usage-counter.ts) and read by `keys usage`. Counts only: no address,
 * no user agent. Kept 400 days (the API's flush prunes older days).
 */
export const keyUsage = sqliteTable(
  'key_usage',
  {
    keyId: integer('key_id').notNull(),
    // UTC day, `YYYY-MM-DD`.
    day: text('day').notNull(),
    // Requests per endpoint, every status included.
    articles: integer('articles').notNull().default(0),
    article: integer('article').notNull().default(0),
    categories: integer('categories').notNull().default(0),
    search: integer('search').notNull().default(0),
    changes: integer('changes').notNull().default(0),
    notModified: integer('not_modified').notNull().default(0),
    clientErrors: integer('client_errors').notNull().default(0),
    serverErrors: integer('server_errors').notNull().default(0),
    // Distinct articles read, set when the day's key_usage_articles rows are folded into it
    // (two days after the day); null while those rows are the count.
    distinctArticles: integer('distinct_articles'),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.day] })],
);

/** The articles a key read on a day (INSERT OR IGNORE: distinct by construction), for recent days only. */
export const keyUsageArticles = sqliteTable(
  'key_usage_articles',
  {
    day: text('day').notNull(),
    keyId: integer('key_id').notNull(),
    // An article is its slug within a locale (the contract matches the path's slug per locale).
    locale: text('locale').notNull(),
    slug: text('slug').notNull(),
  },
  (t) => [primaryKey({ columns: [t.day, t.keyId, t.locale, t.slug] })],
);

export type KeyUsageRow = typeof keyUsage.$inferSelect;
