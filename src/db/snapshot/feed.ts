import type Database from 'better-sqlite3';
import type { Locale } from '../../locale.js';
import { statementsFor, type Db } from '../sqlite/connection.js';
import type { ArticleWithSection } from './content.js';

/*
 * Read queries over the change feed (see src/db/snapshot/feed-write.ts for what its rows mean). A
 * position is the pair (effective_ms, seq); every query here is one range probe of an index.
 */

export interface FeedPosition {
  ms: number;
  seq: number;
}

export interface FeedStateView {
  epoch: string;
  pendingMs: number | null;
  pruned: FeedPosition;
}

export interface FeedEntryRow {
  seq: number;
  effective_ms: number;
  kind: 'upsert' | 'delete';
  slug: string;
  /** The article as the list shows it, on upserts; undefined on deletes. */
  article: ArticleWithSection | undefined;
}

type RawEntry = Omit<FeedEntryRow, 'article'> & Partial<Omit<ArticleWithSection, 'slug'>> & { article_id: number | null };

// Entries with the article's list fields on upserts; each slug only at its latest change in
// effect at the bound (compaction: a later row of the same slug hides an earlier one).
const PAGE_SELECT = `SELECT f.seq, f.effective_ms, f.kind, f.slug, a.id AS article_id, a.locale, a.title, a.excerpt,
    a.body, a.author, a.image_url, a.image_alt, a.image_credit, a.image_credit_url, a.image_source_url,
    a.published_at, a.updated_at, a.url, a.section_slug, s.name AS section_name
  FROM feed_entries f INDEXED BY feed_entries_locale_position
  LEFT JOIN articles a ON f.kind = 'upsert' AND a.locale = f.locale AND a.slug = f.slug
  LEFT JOIN sections s ON s.locale = a.locale AND s.slug = a.section_slug`;
const COMPACTED = `AND NOT EXISTS (SELECT 1 FROM feed_entries g WHERE g.locale = f.locale AND g.slug = f.slug
    AND g.effective_ms <= ? AND (g.effective_ms, g.seq) > (f.effective_ms, f.seq))`;

interface Statements {
  state: Database.Statement<[string], { epoch: string; pending_ms: number | null; pruned_ms: number; pruned_seq: number }>;
  sameMs: Database.Statement<[string, number, number, number, number, number], RawEntry>;
  laterMs: Database.Statement<[string, number, number, number, number], RawEntry>;
  lastDue: Database.Statement<[string, number], { ms: number | null }>;
  lastSeq: Database.Statement<[string], { seq: number | null }>;
  inEffect: Database.Statement<[string, string, number], { kind: 'upsert' | 'delete' }>;
  stats: Database.Statement<[], { entries: number }>;
  oldestDelete: Database.Statement<[], { ms: number | null }>;
}

const prepared = statementsFor(
  (sqlite): Statements => ({
    state: sqlite.prepare(`SELECT epoch, pending_ms, pruned_ms, pruned_seq FROM feed_state WHERE locale = ?`),
    // Entries after a position and in effect at a bound, each slug only at its latest change
    // in effect (compaction), with the article's list fields on upserts.
    // The position is split into two index ranges (the rest of the cursor's millisecond,
    // then later milliseconds): SQLite ranges a row-value comparison on its first column only,
    // and a whole backfill shares one millisecond.
    sameMs: sqlite.prepare(`${PAGE_SELECT} WHERE f.locale = ? AND f.effective_ms = ? AND f.seq > ? AND f.effective_ms <= ? ${COMPACTED} ORDER BY f.seq LIMIT ?`),
    laterMs: sqlite.prepare(`${PAGE_SELECT} WHERE f.locale = ? AND f.effective_ms > ? AND f.effective_ms <= ? ${COMPACTED} ORDER BY f.effective_ms, f.seq LIMIT ?`),
    lastDue: sqlite.prepare(`SELECT max(effective_ms) AS ms FROM feed_entries WHERE locale = ? AND effective_ms <= ?`),
    lastSeq: sqlite.prepare(`SELECT max(seq) AS seq FROM feed_entries WHERE locale = ?`),
    inEffect: sqlite.prepare(
      `SELECT kind FROM feed_entries WHERE locale = ? AND slug = ? AND effective_ms <= ? ORDER BY effective_ms DESC, seq DESC LIMIT 1`,
    ),
    stats: sqlite.prepare(`SELECT count(*) AS entries FROM feed_entries`),
    oldestDelete: sqlite.prepare(`SELECT min(effective_ms) AS ms FROM feed_entries WHERE kind = 'delete'`),
  }),
);

/** The locale's feed state, or undefined when no sync has built its feed yet. */
export function feedState(db: Db, locale: Locale): FeedStateView | undefined {
  const row = prepared(db).state.get(locale);
  return row && { epoch: row.epoch, pendingMs: row.pending_ms, pruned: { ms: row.pruned_ms, seq: row.pruned_seq } };
}

/** Up to `limit` compacted entries after `after`, in effect at `boundMs`, in feed order. */
export function feedEntriesAfter(db: Db, locale: Locale, after: FeedPosition, boundMs: number, limit: number): FeedEntryRow[] {
  const s = prepared(db);
  const rows = s.sameMs.all(locale, after.ms, after.seq, boundMs, boundMs, limit);
  if (rows.length < limit) rows.push(...s.laterMs.all(locale, after.ms, boundMs, boundMs, limit - rows.length));
  return rows.map((r) => ({
    seq: r.seq,
    effective_ms: r.effective_ms,
    kind: r.kind,
    slug: r.slug,
    article:
      r.kind === 'upsert' && r.article_id !== null
        ? ({ ...r, id: r.article_id, slug: r.slug } as unknown as ArticleWithSection)
        : undefined,
  }));
}

/**
 * The newest position in effect at `boundMs`: the latest effective time of a row in effect
 * and the highest seq of the locale. Every row written later sorts after it.
 */
export function feedHead(db: Db, locale: Locale, boundMs: number): FeedPosition {
  const s = prepared(db);
  return { ms: s.lastDue.get(locale, boundMs)?.ms ?? 0, seq: s.lastSeq.get(locale)?.seq ?? 0 };
}

/** Whether the slug's latest change in effect at `boundMs` is a delete still retained. */
export function isRemoved(db: Db, locale: Locale, slug: string, boundMs: number): boolean {
  return prepared(db).inEffect.get(locale, slug, boundMs)?.kind === 'delete';
}

/** For /health: rows in the feed and when the oldest retained delete took effect. */
export function feedStats(db: Db): { entries: number; oldestDeleteMs: number | null } {
  const s = prepared(db);
  return { entries: s.stats.get()?.entries ?? 0, oldestDeleteMs: s.oldestDelete.get()?.ms ?? null };
}
