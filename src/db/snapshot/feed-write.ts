import type Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import type { Locale } from '../../locale.js';
import { statementsFor, type Db } from '../sqlite/connection.js';
import { exposedFrom, type ExposureRow } from './exposure.js';

/*
 * The worker's writes to the change feed (tables feed_entries and feed_state), each inside the
 * sync's own write transaction: a failed or interrupted sync adds nothing to the feed.
 *
 * For each slug the feed holds at most one row in effect (the latest change a partner can have
 * seen) and at most one row scheduled for later (a scheduled article's publication). After the
 * articles and sections are written, recordFeedChanges compares what a partner should see of
 * each touched slug (or, on a full sync, of every slug) with those rows and writes the
 * difference.
 */

type Kind = 'upsert' | 'delete';
interface FeedRow {
  seq: number;
  effective_ms: number;
  kind: Kind;
  fingerprint: string | null;
}
interface Desired extends ExposureRow {
  content_hash: string;
  section_name: string | null;
}

type ScanRow = Desired & { slug: string; source: 0 | 1; seq: number | null; effective_ms: number | null; kind: Kind | null; fingerprint: string | null };

interface Statements {
  state: Database.Statement<[string], { epoch: string }>;
  createState: Database.Statement<[string, string]>;
  setPending: Database.Statement<[number | null]>;
  desired: Database.Statement<[string, string], Desired>;
  rows: Database.Statement<[string, string], FeedRow>;
  deleteRow: Database.Statement<[number]>;
  insert: Database.Statement<[string, string, number, Kind, string | null]>;
  scan: Database.Statement<[string, string], ScanRow>;
  prunable: Database.Statement<[string, number], { seq: number; effective_ms: number }>;
  setPruned: Database.Statement<[number, number, string, number, number]>;
}

const prepared = statementsFor(
  (sqlite): Statements => ({
    state: sqlite.prepare(`SELECT epoch FROM feed_state WHERE locale = ?`),
    createState: sqlite.prepare(`INSERT INTO feed_state (locale, epoch) VALUES (?, ?)`),
    setPending: sqlite.prepare<[number | null]>(`UPDATE feed_state SET pending_ms = ?`),
    desired: sqlite.prepare(
      `SELECT a.status, a.published_at, a.content_hash, s.name AS section_name, s.active AS section_active
       FROM articles a LEFT JOIN sections s ON s.locale = a.locale AND s.slug = a.section_slug
       WHERE a.locale = ? AND a.slug = ?`,
    ),
    rows: sqlite.prepare(
      `SELECT seq, effective_ms, kind, fingerprint FROM feed_entries WHERE locale = ? AND slug = ? ORDER BY effective_ms, seq`,
    ),
    deleteRow: sqlite.prepare(`DELETE FROM feed_entries WHERE seq = ?`),
    insert: sqlite.prepare(`INSERT INTO feed_entries (locale, slug, effective_ms, kind, fingerprint) VALUES (?, ?, ?, ?, ?)`),
    // Each slug's article (source 0) then its feed rows in feed order: one ordered pass.
    scan: sqlite.prepare(
      `SELECT a.slug, 0 AS source, a.status, a.published_at, a.content_hash, s.name AS section_name, s.active AS section_active,
              NULL AS seq, NULL AS effective_ms, NULL AS kind, NULL AS fingerprint
       FROM articles a LEFT JOIN sections s ON s.locale = a.locale AND s.slug = a.section_slug
       WHERE a.locale = ?
       UNION ALL
       SELECT slug, 1, NULL, NULL, NULL, NULL, NULL, seq, effective_ms, kind, fingerprint
       FROM feed_entries WHERE locale = ?
       ORDER BY 1, 2, 9, 8`,
    ),
    prunable: sqlite.prepare(
      `SELECT seq, effective_ms FROM feed_entries WHERE kind = 'delete' AND locale = ? AND effective_ms < ? ORDER BY effective_ms, seq`,
    ),
    setPruned: sqlite.prepare(
      // Only ever forward: a cursor's mark is compared with the newest pruned position, which
      // a clock set back past the retention period must not move back.
      `UPDATE feed_state SET pruned_ms = ?, pruned_seq = ? WHERE locale = ? AND (pruned_ms, pruned_seq) < (?, ?)`,
    ),
  }),
);

/**
 * Makes sure the locale has a feed; returns true when it was just created, in which case the
 * caller records every article of the locale (a snapshot from before the feed existed).
 */
export function ensureFeed(db: Db, locale: Locale): boolean {
  const s = prepared(db);
  if (s.state.get(locale)) return false;
  // A new epoch: cursors of another (older, rebuilt) snapshot are refused, not misread.
  s.createState.run(locale, randomBytes(5).readUIntBE(0, 5).toString(36).padStart(8, '0').slice(-8));
  return true;
}

/**
 * Marks (or clears, with null) that a sync is about to commit with changes taking effect at
 * or after `ms`. Committed on its own just before the sync's transaction: readers then hold
 * scheduled entries back to `ms`, so nothing they hand out can sort after the sync's entries.
 */
export function setFeedPending(db: Db, ms: number | null): void {
  prepared(db).setPending.run(ms);
}

export interface FeedWriteCounts {
  upserts: number;
  deletes: number;
}

/**
 * Records what changed for partners among `slugs` at `nowMs`, the sync's commit time. Upserts
 * for articles newly exposed or whose partner-visible content changed; deletes for slugs that
 * stop being exposed; a scheduled article's upsert at its publication time. Must run inside
 * the sync's write transaction, after its writes.
 *
 * `'all'` reconciles the whole locale: every slug of the articles or of the feed whose rows
 * disagree with what the snapshot holds, whoever made the change (this sync, or anything that
 * wrote the snapshot without writing the feed: an older worker after a rollback, a restored
 * backup, a manual fix).
 */
export function recordFeedChanges(db: Db, locale: Locale, slugs: Iterable<string> | 'all', nowMs: number): FeedWriteCounts {
  const s = prepared(db);
  const counts: FeedWriteCounts = { upserts: 0, deletes: 0 };
  const list = slugs === 'all' ? slugsOutOfStep(db, locale, nowMs) : slugs;
  for (const slug of list) {
    const plan = planFor(desiredState(s.desired.get(locale, slug)), s.rows.all(locale, slug), nowMs);
    if (!plan) continue;
    for (const seq of plan.remove) s.deleteRow.run(seq);
    for (const row of plan.add) {
      s.insert.run(locale, slug, row.effectiveMs, row.kind, row.fingerprint);
      counts[row.kind === 'upsert' ? 'upserts' : 'deletes'] += 1;
    }
  }
  return counts;
}

interface Plan {
  /** Feed rows (seq) to delete. */
  remove: number[];
  add: Array<{ effectiveMs: number; kind: Kind; fingerprint: string | null }>;
}

/**
 * What to write so that one slug's feed rows say what a partner sees of it now and at its
 * scheduled publication; undefined when they already do.
 */
function planFor(want: DesiredState | undefined, rows: readonly FeedRow[], nowMs: number): Plan | undefined {
  const plan: Plan = { remove: [], add: [] };
  const inEffect = rows.filter((r) => r.effective_ms <= nowMs).at(-1);
  const scheduled = rows.filter((r) => r.effective_ms > nowMs);

  // What a partner sees now.
  const now = want && want.publishedMs <= nowMs ? want.fingerprint : undefined;
  const change: Kind | undefined =
    now !== undefined
      ? inEffect?.kind === 'upsert' && inEffect.fingerprint === now
        ? undefined
        : 'upsert'
      : inEffect?.kind === 'upsert'
        ? 'delete'
        : undefined;
  if (change) {
    // The new row supersedes every earlier one for every reader: keep storage compacted.
    for (const row of rows) if (row.effective_ms <= nowMs) plan.remove.push(row.seq);
    plan.add.push({ effectiveMs: nowMs, kind: change, fingerprint: change === 'upsert' ? (now as string) : null });
  }

  // What a partner will see at a scheduled publication time. Rows scheduled after nowMs were
  // never handed out (readers stop at the pending mark), so they can be replaced freely.
  const later = want && want.publishedMs > nowMs ? want : undefined;
  const same = later && scheduled.length === 1 && scheduled[0]!.effective_ms === later.publishedMs && scheduled[0]!.fingerprint === later.fingerprint;
  if (!same && (later || scheduled.length > 0)) {
    for (const row of scheduled) plan.remove.push(row.seq);
    if (later) plan.add.push({ effectiveMs: later.publishedMs, kind: 'upsert', fingerprint: later.fingerprint });
  }
  return plan.remove.length > 0 || plan.add.length > 0 ? plan : undefined;
}

/**
 * The slugs of a locale whose feed rows disagree with the snapshot, found in one pass over
 * the articles and the feed, both read in slug order (a few hundred milliseconds for 110,000
 * articles; only the few slugs found are then read and written one by one).
 */
function slugsOutOfStep(db: Db, locale: Locale, nowMs: number): string[] {
  const out: string[] = [];
  let slug: string | undefined;
  let want: DesiredState | undefined;
  let rows: FeedRow[] = [];
  const settle = () => {
    if (slug !== undefined && planFor(want, rows, nowMs)) out.push(slug);
  };
  for (const row of prepared(db).scan.iterate(locale, locale)) {
    if (row.slug !== slug) {
      settle();
      slug = row.slug;
      want = undefined;
      rows = [];
    }
    if (row.source === 0) want = desiredState(row);
    else rows.push({ seq: row.seq!, effective_ms: row.effective_ms!, kind: row.kind!, fingerprint: row.fingerprint });
  }
  settle();
  return out;
}

interface DesiredState {
  publishedMs: number;
  fingerprint: string;
}

function desiredState(row: Desired | undefined): DesiredState | undefined {
  const publishedMs = exposedFrom(row);
  if (!row || publishedMs === undefined) return undefined;
  // Everything stored about the article (its hash) and what the list shows of its section.
  return { publishedMs, fingerprint: `${row.content_hash}|${row.section_name ?? ''}` };
}

/**
 * Prunes deletes that took effect before `beforeMs` and remembers the newest pruned position:
 * a cursor before it, from a read that started before that delete was written, may have missed
 * a delete and is refused (src/content/feed.ts). Returns the rows pruned.
 */
export function pruneFeedDeletes(db: Db, locale: Locale, beforeMs: number): number {
  const s = prepared(db);
  const rows = s.prunable.all(locale, beforeMs);
  const last = rows.at(-1);
  if (!last) return 0;
  for (const row of rows) s.deleteRow.run(row.seq);
  s.setPruned.run(last.effective_ms, last.seq, locale, last.effective_ms, last.seq);
  return rows.length;
}
