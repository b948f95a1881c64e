import type { ArticleWithSection } from '../db/snapshot/content.js';
import { consistentRead } from '../db/snapshot/content.js';
import { feedEntriesAfter, feedHead, feedState, isRemoved, type FeedPosition, type FeedStateView } from '../db/snapshot/feed.js';
import type { StoreSession } from '../db/snapshot/snapshot-store.js';
import { InvalidCursorError, ServiceUnavailableError } from '../errors.js';
import type { Locale } from '../locale.js';

/*
 * The change feed's rules: cursors, the time bound of a read, and what a page holds.
 *
 * Every feed row has a position (effective_ms, seq): seq grows with every row written, and
 * effective_ms is the commit time of the sync that wrote it, or a scheduled article's
 * publication time. A read at `now` returns rows in effect at its bound, in position order,
 * so a scheduled article enters the feed by itself when its time comes.
 *
 * Why no cursor skips a change: a sync commits rows at a time T it reads after committing its
 * pending mark P <= T (sync/run-sync.ts). A read that sees the mark stops at P; a read that
 * does not see it took `now` before the mark's commit, so before T. Either way every position
 * a reader hands out sorts before the sync's rows, which get higher seqs than any before.
 *
 * Why a cursor after a pruning is refused only when it could have missed a delete: a cursor
 * carries its read's mark, where the feed stood when the read started from the beginning (its
 * head, or its newest pruned delete if later). Every delete at or before the mark was written
 * before that first page, so the article it took down was already out of the feed (compaction)
 * and the reader never had it: pruned, it cannot be missed. A delete written after the read
 * started (after the mark) can be: a cursor before the newest pruned delete, when that delete
 * lies after the cursor's mark, is refused. Pruning takes deletes oldest first, so the newest
 * pruned one is the last a cursor could miss. A cursor of the older format (no mark) is read
 * with the mark at the beginning: the old rule.
 */

/** A pending mark older than this was left by a worker that died before committing. */
const PENDING_TTL_MS = 10 * 60_000;
const BEGINNING: FeedPosition = { ms: -1, seq: 0 };
/** How far ahead of this host's clock another API host's may run (they share NTP). */
const MAX_CLOCK_AHEAD_MS = 86_400_000;
// c_<epoch>_<ms>_<seq>_<mark ms>_<mark seq>, base 36; cursors handed out before the mark
// existed end at <seq> and stay valid.
const CURSOR = /^c_([0-9a-z]{8})_([0-9a-z]{1,11})_([0-9a-z]{1,11})(?:_([0-9a-z]{1,11})_([0-9a-z]{1,11}))?$/;
const INVALID = 'since is not a cursor this feed can continue from (malformed, from another snapshot, older than the retained history, or dated in the future); read the feed again without since and rebuild your copy from it.';

export interface FeedChange {
  type: 'upsert' | 'delete';
  slug: string;
  changedAtMs: number;
  /** The article as the list shows it, on upserts. */
  article?: ArticleWithSection;
}

export interface FeedPage {
  changes: FeedChange[];
  next: string;
  hasMore: boolean;
  /**
   * The read stopped short of `now` at a sync's pending mark: the page is right for this
   * moment, but must not be kept, since the mark can go without the content version moving.
   */
  heldBack: boolean;
  /** The time the read saw up to (`now`, or the pending mark when held back): its Last-Modified's. */
  asOf: number;
}

/** Where a read is, and its mark: the head of the feed when the read started from the beginning. */
export interface FeedCursor {
  position: FeedPosition;
  mark: FeedPosition;
}

export function encodeCursor(epoch: string, cursor: FeedCursor): string {
  const { position, mark } = cursor;
  return `c_${epoch}_${Math.max(0, position.ms).toString(36)}_${position.seq.toString(36)}_${Math.max(0, mark.ms).toString(36)}_${mark.seq.toString(36)}`;
}

function decodeCursor(cursor: string, state: FeedStateView, now: number): FeedCursor {
  const m = CURSOR.exec(cursor);
  if (!m || m[1] !== state.epoch) throw new InvalidCursorError(INVALID);
  const position = { ms: parseInt(m[2]!, 36), seq: parseInt(m[3]!, 36) };
  const mark = m[4] === undefined ? BEGINNING : { ms: parseInt(m[4], 36), seq: parseInt(m[5]!, 36) };
  // The newest pruned delete was written after this read started and lies after its position:
  // continuing would miss it (and maybe older pruned ones).
  if (compare(position, state.pruned) < 0 && compare(mark, state.pruned) < 0) throw new InvalidCursorError(INVALID);
  // A cursor's time is at most its reader's clock: one far ahead of ours (a damaged or made-up
  // cursor) would be answered with nothing for ever. Not checked against the rows this copy
  // holds: a replica one commit behind, or a scheduled row taken back, legitimately leaves a
  // cursor past them.
  if (position.ms > now + MAX_CLOCK_AHEAD_MS || mark.ms > now + MAX_CLOCK_AHEAD_MS) throw new InvalidCursorError(INVALID);
  // A cursor of the older format was accepted, so it is at or after every pruned delete: the
  // newest pruned position is a mark that keeps the same rule for what it is handed next.
  return { position, mark: m[4] === undefined ? state.pruned : mark };
}

const compare = (a: FeedPosition, b: FeedPosition) => a.ms - b.ms || a.seq - b.seq;
const latest = (a: FeedPosition, b: FeedPosition) => (compare(a, b) >= 0 ? a : b);

/** How far in time a read at `now` may see: held back to a sync's pending mark, if any. */
function boundOf(state: FeedStateView, now: number): number {
  const pending = state.pendingMs;
  return pending !== null && now - pending < PENDING_TTL_MS ? Math.min(now, pending) : now;
}

function stateOf(session: StoreSession, locale: Locale): FeedStateView {
  const state = feedState(session.db, locale);
  if (!state) {
    throw new ServiceUnavailableError(
      'The change feed has no content yet; please retry in a few minutes.',
      `the change feed of locale ${locale} has not been built yet`,
    );
  }
  return state;
}

/**
 * One page of the compacted feed after `since` (from the beginning when undefined). `now`
 * must be read before this call: the read runs in one transaction that starts after it.
 */
export function readChanges(
  session: StoreSession,
  query: { locale: Locale; since: string | undefined; limit: number; now: number },
): FeedPage {
  return consistentRead(session.db, () => {
    const state = stateOf(session, query.locale);
    const bound = boundOf(state, query.now);
    // A read from the beginning is marked with where the feed stood when it started (see the
    // top of this file): its head, or the newest pruned delete when that was the newest row.
    const from = query.since === undefined ? { position: BEGINNING, mark: latest(feedHead(session.db, query.locale, bound), state.pruned) } : decodeCursor(query.since, state, query.now);
    const after = from.position;
    const rows = feedEntriesAfter(session.db, query.locale, after, bound, query.limit + 1);
    const hasMore = rows.length > query.limit;
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    // On the last page, the cursor moves to the head (every row written later sorts after it),
    // so a partner polling a quiet feed keeps a recent cursor, and the answer stays the same
    // (same ETag) until something changes.
    let next: FeedPosition;
    if (hasMore) next = { ms: last!.effective_ms, seq: last!.seq };
    else {
      const head = feedHead(session.db, query.locale, bound);
      next = compare(head, after) > 0 ? head : after;
    }
    const changes = page.map((row): FeedChange =>
      // An upsert whose article cannot be read is a bug elsewhere; never hand out a partial one.
      row.kind === 'upsert' && row.article
        ? { type: 'upsert', slug: row.slug, changedAtMs: row.effective_ms, article: row.article }
        : { type: 'delete', slug: row.slug, changedAtMs: row.effective_ms },
    );
    return { changes, next: encodeCursor(state.epoch, { position: next, mark: from.mark }), hasMore, heldBack: bound < query.now, asOf: bound };
  });
}

/** Whether a slug was taken down and its delete is still retained in the feed. */
export function wasRemoved(session: StoreSession, locale: Locale, slug: string, now: number): boolean {
  const state = feedState(session.db, locale);
  return state !== undefined && isRemoved(session.db, locale, slug, boundOf(state, now));
}
