import { integer, sqliteTable, text } from '../sqlite/drizzle.js';

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
});

export type KeyRow = typeof apiKeys.$inferSelect;
