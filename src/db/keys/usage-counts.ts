import type Database from 'better-sqlite3';

/*
 * The SQL of usage per key and UTC day (tables key_usage and key_usage_articles in
 * keys-schema.ts): the API's batched write and pruning, and the CLI's read. Several API
 * processes add to the same rows (an upsert adds, never overwrites), and the distinct articles
 * of a day are rows inserted OR IGNOREd, so they stay distinct across processes.
 */

/** The per-endpoint and per-outcome counts, in the order of USAGE_COLUMNS. */
export const USAGE_COLUMNS = [
  'articles',
  'article',
  'categories',
  'search',
  'changes',
  'not_modified',
  'client_errors',
  'server_errors',
] as const;
export type UsageColumn = (typeof USAGE_COLUMNS)[number];

/** The tables the API adds to every few seconds (a restore does not expect them unchanged after it). */
export const USAGE_TABLES = ['key_usage', 'key_usage_articles'] as const;

/** Counts are kept this many days (the contract's 400); older days are deleted by the API's flush. */
export const USAGE_RETENTION_DAYS = 400;
/**
 * A day's article rows are folded into its distinct_articles count this many days after it: a
 * process that could not flush for longer than that adds its articles of the day to nothing.
 */
export const USAGE_FOLD_AFTER_DAYS = 2;

export interface UsageBatch {
  /** Counts per key and day, added to what is stored. */
  counts: Iterable<{ keyId: number; day: string; counts: ArrayLike<number> }>;
  /** Articles read (locale, slug) per key and day. */
  articles: Iterable<{ keyId: number; day: string; locale: string; slug: string }>;
}

const UPSERT = `INSERT INTO key_usage (key_id, day, ${USAGE_COLUMNS.join(', ')})
  VALUES (?, ?, ${USAGE_COLUMNS.map(() => '?').join(', ')})
  ON CONFLICT (key_id, day) DO UPDATE SET ${USAGE_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`;
const ARTICLE = 'INSERT OR IGNORE INTO key_usage_articles (day, key_id, locale, slug) VALUES (?, ?, ?, ?)';

/** Adds a batch of counts in one write transaction (prune, when given, in the same one). */
export function writeUsage(sqlite: Database.Database, batch: UsageBatch, prune?: { today: string }): void {
  const upsert = sqlite.prepare(UPSERT);
  const article = sqlite.prepare(ARTICLE);
  sqlite
    .transaction(() => {
      for (const row of batch.counts) upsert.run(row.keyId, row.day, ...Array.from(row.counts));
      for (const a of batch.articles) article.run(a.day, a.keyId, a.locale, a.slug);
      if (prune) pruneUsage(sqlite, prune.today);
    })
    .immediate();
}

/**
 * Deletes days past the retention, and folds the article rows of days older than
 * USAGE_FOLD_AFTER_DAYS into their count: the rows of 400 days would be one per key, day and
 * article read (tens of millions for a partner mirroring everything); a count is one number.
 */
export function pruneUsage(sqlite: Database.Database, today: string): void {
  const oldest = addDays(today, -(USAGE_RETENTION_DAYS - 1));
  const foldBefore = addDays(today, -USAGE_FOLD_AFTER_DAYS);
  sqlite.prepare('DELETE FROM key_usage WHERE day < ?').run(oldest);
  sqlite
    .prepare(
      `UPDATE key_usage SET distinct_articles = coalesce(distinct_articles, 0) +
         (SELECT count(*) FROM key_usage_articles a WHERE a.day = key_usage.day AND a.key_id = key_usage.key_id)
       WHERE day < ? AND EXISTS (SELECT 1 FROM key_usage_articles a WHERE a.day = key_usage.day AND a.key_id = key_usage.key_id)`,
    )
    .run(foldBefore);
  sqlite.prepare('DELETE FROM key_usage_articles WHERE day < ?').run(foldBefore);
}

/** One key's usage on one day, as `keys usage` prints it. */
export interface UsageRow {
  key_id: number;
  partner: string;
  day: string;
  articles: number;
  article: number;
  categories: number;
  search: number;
  changes: number;
  not_modified: number;
  client_errors: number;
  server_errors: number;
  distinct_articles: number;
}

export interface UsageFilter {
  partner?: string;
  keyId?: number;
  from?: string;
  to?: string;
}

/** The stored rows matching the filter, by day then key; distinct articles counted or folded. */
export function readUsage(sqlite: Database.Database, filter: UsageFilter): UsageRow[] {
  const where: string[] = [];
  const args: (string | number)[] = [];
  if (filter.partner !== undefined) (where.push('k.partner = ?'), args.push(filter.partner));
  if (filter.keyId !== undefined) (where.push('u.key_id = ?'), args.push(filter.keyId));
  if (filter.from !== undefined) (where.push('u.day >= ?'), args.push(filter.from));
  if (filter.to !== undefined) (where.push('u.day <= ?'), args.push(filter.to));
  const sql = `SELECT u.key_id, coalesce(k.partner, '') AS partner, u.day, ${USAGE_COLUMNS.map((c) => `u.${c}`).join(', ')},
      coalesce(u.distinct_articles, 0) +
        (SELECT count(*) FROM key_usage_articles a WHERE a.day = u.day AND a.key_id = u.key_id) AS distinct_articles
    FROM key_usage u LEFT JOIN api_keys k ON k.id = u.key_id
    ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY u.day, u.key_id`;
  return sqlite.prepare(sql).all(...args) as UsageRow[];
}

/** `YYYY-MM-DD` plus `n` days (UTC). */
export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

/** The UTC day of an instant, `YYYY-MM-DD`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The usage rows of a keys database file, each with its key's hash (ids may differ in a backup). */
export interface StoredUsage {
  counts: (Record<UsageColumn, number> & { hash: string; day: string; distinct_articles: number | null })[];
  articles: { hash: string; day: string; locale: string; slug: string }[];
}

/** Reads the usage of a keys database (read-only), or nothing when it cannot be read or has none yet. */
export function readStoredUsage(sqlite: Database.Database): StoredUsage {
  const has = sqlite.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'key_usage'`).get();
  if (!has) return { counts: [], articles: [] };
  return {
    counts: sqlite
      .prepare(`SELECT k.hash, u.day, ${USAGE_COLUMNS.map((c) => `u.${c}`).join(', ')}, u.distinct_articles FROM key_usage u JOIN api_keys k ON k.id = u.key_id`)
      .all() as StoredUsage['counts'],
    articles: sqlite
      .prepare('SELECT k.hash, a.day, a.locale, a.slug FROM key_usage_articles a JOIN api_keys k ON k.id = a.key_id')
      .all() as StoredUsage['articles'],
  };
}

/**
 * Carries the usage of the database a restore replaces into the restored copy: counts only
 * grow, so for each key (matched by hash) and day the larger of each count is kept, and the
 * articles read are united. Usage of keys the copy does not have is left out.
 */
export function mergeUsage(copy: Database.Database, live: StoredUsage): number {
  const idOf = new Map((copy.prepare('SELECT hash, id FROM api_keys').all() as { hash: string; id: number }[]).map((k) => [k.hash, k.id]));
  const upsert = copy.prepare(
    `INSERT INTO key_usage (key_id, day, ${USAGE_COLUMNS.join(', ')}, distinct_articles)
     VALUES (?, ?, ${USAGE_COLUMNS.map(() => '?').join(', ')}, ?)
     ON CONFLICT (key_id, day) DO UPDATE SET ${USAGE_COLUMNS.map((c) => `${c} = max(${c}, excluded.${c})`).join(', ')},
       distinct_articles = CASE WHEN excluded.distinct_articles IS NULL THEN distinct_articles
         ELSE max(coalesce(distinct_articles, 0), excluded.distinct_articles) END`,
  );
  const article = copy.prepare(ARTICLE);
  let merged = 0;
  copy
    .transaction(() => {
      for (const row of live.counts) {
        const id = idOf.get(row.hash);
        if (id === undefined) continue;
        upsert.run(id, row.day, ...USAGE_COLUMNS.map((c) => row[c]), row.distinct_articles);
        merged += 1;
      }
      for (const a of live.articles) {
        const id = idOf.get(a.hash);
        if (id !== undefined) article.run(a.day, id, a.locale, a.slug);
      }
    })
    .immediate();
  return merged;
}
