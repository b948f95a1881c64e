import type { StoreSession } from '../db/snapshot/snapshot-store.js';
import { InvalidCursorError } from '../errors.js';
import type { KeyScope } from '../keys/scope.js';
import type { Locale } from '../locale.js';
import { hydrate } from './articles.js';
import { readChanges, type FeedChange, type FeedPage } from './feed.js';
import type { LocaleView } from './locale-view.js';

/*
 * The change feed of a key with a scope (the contract's "Its change feed holds only what it
 * may see"; decision 0065). The feed itself (src/content/feed.ts) knows nothing of keys: this
 * reads it and shapes it for one scope, so that a mirror kept from it always equals what the
 * key may see, through scope changes and syncs in any order.
 *
 * - Each page says an article of the feed is an upsert only when it is in the key's sections
 *   now; an upsert of an article outside them becomes a delete (the article may have moved out
 *   of the scope, and a delete of something the partner does not hold changes nothing). From
 *   the beginning (no `since`) the partner holds nothing, so those are left out instead.
 * - A cursor handed to a scoped key names the scope version its copy follows: `<cursor>.s<v>`.
 *   When the key's scope changed since (version w), the next read first sends, for every
 *   exposed article whose feed state has not moved since the cursor and whose place in the
 *   scope did (in v's sections but not w's, or the reverse), a delete or an upsert, in article
 *   id order and paged like the rest (`<cursor>.s<v>-<w>-<last id>` while doing so), then the
 *   feed after the cursor. Articles whose feed state moved after the cursor are sent by the
 *   feed itself, at their current state: each slug once.
 * - Should the scope change again while a change is being sent, the copy follows one version
 *   below the last id sent and another above it: rather than a cursor naming ever more
 *   versions, every exposed article is sent again (`<cursor>.r<w>-<last id>`: upserts in the
 *   scope, deletes outside it), paged like the rest. Rare (two scope changes within one
 *   partner's read), and it keeps every cursor to at most three numbers.
 * - The versions live in the keys database (key_scope_changes), never pruned, so a cursor of
 *   any age, a restart, or a key created after the changes read the same way. A cursor naming
 *   a version the key never had (another key's, or the keys database restored from an older
 *   backup) is invalid_cursor: the partner rebuilds its copy from the beginning.
 */

const SUFFIX = /^(.+)\.(?:s([0-9a-z]{1,8})(?:-([0-9a-z]{1,8})-([0-9a-z]{1,11}))?|r([0-9a-z]{1,8})-([0-9a-z]{1,11}))$/;
const INVALID =
  'since is not a cursor this feed can continue from for this API key (a cursor of another key, or from before the keys were restored); read the feed again without since and rebuild your copy from it.';
/** Rows read at once while collecting the slugs the feed itself will send. */
const SCAN_LIMIT = 1000;
/** Reads of the feed one page may make while it finds only articles outside the scope. */
const MAX_EMPTY_READS = 50;

type Sections = readonly string[] | null;

interface ScopedCursor {
  base: string;
  /**
   * The scope version the partner's copy follows (for ids above `after` while diffing), or
   * `unknown` while every article is being sent again.
   */
  from: number | 'unknown';
  /** While sending a scope change: its target version and the last article id sent. */
  diff?: { to: number; after: number };
}

const inSections = (sections: Sections, slug: string): boolean => sections === null || sections.includes(slug);

function sectionsAt(scope: KeyScope, version: number): Sections {
  if (version === 0) return null;
  if (version > scope.version || !scope.history.has(version)) throw new InvalidCursorError(INVALID);
  return scope.history.get(version)!;
}

function parse(since: string, scope: KeyScope): ScopedCursor {
  const m = SUFFIX.exec(since);
  // A cursor from before the key had a scope (or an unscoped answer's): its copy followed everything.
  if (!m) return { base: since, from: 0 };
  const cursor: ScopedCursor =
    m[5] !== undefined
      ? { base: m[1]!, from: 'unknown', diff: { to: parseInt(m[5], 36), after: parseInt(m[6]!, 36) } }
      : { base: m[1]!, from: parseInt(m[2]!, 36), ...(m[3] !== undefined && { diff: { to: parseInt(m[3], 36), after: parseInt(m[4]!, 36) } }) };
  if (cursor.from !== 'unknown') sectionsAt(scope, cursor.from);
  if (cursor.diff) sectionsAt(scope, cursor.diff.to);
  return cursor;
}

const suffixed = (base: string, version: number) => `${base}.s${version.toString(36)}`;

/** Maps the feed's changes to the scope: upserts outside it become deletes (or, from the beginning, are left out). */
function shape(changes: FeedChange[], sections: Sections, fromBeginning: boolean, sent: Set<string>): FeedChange[] {
  const out: FeedChange[] = [];
  for (const change of changes) {
    if (change.type === 'upsert' && change.article && !inSections(sections, change.article.section_slug)) {
      if (fromBeginning && !sent.has(change.slug)) continue;
      out.push({ type: 'delete', slug: change.slug, changedAtMs: change.changedAtMs });
    } else out.push(change);
    sent.add(change.slug);
  }
  return out;
}

/** One page of the feed for a scoped key: see above. `now` is read before the call, as for readChanges. */
export function readScopedChanges(
  session: StoreSession,
  view: LocaleView,
  scope: KeyScope,
  query: { locale: Locale; since: string | undefined; limit: number; now: number },
): FeedPage {
  const current = scope.sections;
  if (query.since === undefined) return fromFeed(session, query, undefined, current, scope.version, true, [], new Set());
  const cursor = parse(query.since, scope);
  const settled = !cursor.diff && cursor.from === scope.version;
  if (settled) return fromFeed(session, query, cursor.base, current, scope.version, false, [], new Set());

  // The scope changed after the cursor: whether the partner's copy holds each article whose
  // feed state has not moved since, by the scope it followed (undefined: not known).
  let from = cursor.from;
  let after = 0;
  if (cursor.diff && cursor.diff.to === scope.version) after = cursor.diff.after;
  // Changed again while a change was being sent: every article is sent again (see above).
  else if (cursor.diff) from = 'unknown';
  const old = from === 'unknown' ? undefined : sectionsAt(scope, from);
  const differs = (section: string): boolean => old === undefined || inSections(old, section) !== inSections(current, section);
  const room = query.limit;

  // The slugs the feed will send itself (their state moved after the cursor).
  const moved = new Set<string>();
  let scan: FeedPage;
  let since = cursor.base;
  do {
    scan = readChanges(session, { locale: query.locale, since, limit: SCAN_LIMIT, now: query.now });
    for (const change of scan.changes) moved.add(change.slug);
    since = scan.next;
  } while (scan.hasMore);

  const { ids, start } = view.exposedIds(scan.asOf);
  const candidates: number[] = [];
  for (let i = start; i < ids.length; i++) {
    const id = ids[i]!;
    if (id <= after) continue;
    const section = view.sectionOf(id);
    if (section !== undefined && differs(section)) candidates.push(id);
  }
  candidates.sort((a, b) => a - b);

  const changes: FeedChange[] = [];
  const sent = new Set<string>();
  let last = after;
  let i = 0;
  while (i < candidates.length && changes.length < room) {
    const batch = candidates.slice(i, i + Math.min(SCAN_LIMIT, room - changes.length));
    i += batch.length;
    for (const article of hydrate(session, batch, scan.asOf)) {
      last = Math.max(last, article.id);
      if (moved.has(article.slug)) continue;
      sent.add(article.slug);
      changes.push(
        inSections(current, article.section_slug)
          ? { type: 'upsert', slug: article.slug, changedAtMs: scan.asOf, article }
          : { type: 'delete', slug: article.slug, changedAtMs: scan.asOf },
      );
    }
    if (batch.length > 0) last = Math.max(last, batch.at(-1)!);
  }
  if (i < candidates.length) {
    const to = `${scope.version.toString(36)}-${last.toString(36)}`;
    const next = from === 'unknown' ? `${cursor.base}.r${to}` : `${cursor.base}.s${from.toString(36)}-${to}`;
    return { changes, next, hasMore: true, heldBack: scan.heldBack, asOf: scan.asOf };
  }
  if (changes.length >= query.limit) {
    // The scope change is sent; the feed after the cursor follows on the next page.
    return { changes, next: suffixed(cursor.base, scope.version), hasMore: true, heldBack: scan.heldBack, asOf: scan.asOf };
  }
  return fromFeed(session, { ...query, limit: query.limit - changes.length }, cursor.base, current, scope.version, false, changes, sent);
}

/** The feed after `since`, shaped to the scope, after the changes already in `head`. */
function fromFeed(
  session: StoreSession,
  query: { locale: Locale; limit: number; now: number },
  since: string | undefined,
  sections: Sections,
  version: number,
  fromBeginning: boolean,
  head: FeedChange[],
  sent: Set<string>,
): FeedPage {
  const changes = [...head];
  let page: FeedPage;
  let reads = 0;
  do {
    page = readChanges(session, { locale: query.locale, since, limit: query.limit, now: query.now });
    changes.push(...shape(page.changes, sections, fromBeginning, sent));
    since = page.next;
    // Only from the beginning can a page lose changes (those outside the scope): read on
    // rather than answer an empty page that has more.
  } while (changes.length === head.length && page.hasMore && ++reads < MAX_EMPTY_READS);
  return { ...page, changes, next: suffixed(page.next, version) };
}
