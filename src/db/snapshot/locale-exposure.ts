import type { Locale } from '../../locale.js';
import type { Db } from '../sqlite/connection.js';
import { activeSections, exposureOrdering, type SectionListRow } from './content.js';
import { Ordering } from './ordering.js';

/** Where the snapshot exposes articles right now: what the embedded engine filters and orders by. */
export interface ExposureIndex {
  /**
   * The article's rank in partner order (newest first, ties by slug) when it is exposed now
   * and in the section asked for; -1 otherwise.
   */
  rank(id: number): number;
  /**
   * Every article id in partner order (some not exposed now, or not in the section: check
   * rank), when the index has it at hand: ordering a large result set is then one pass.
   */
  readonly ordered?: Int32Array;
  /**
   * The article's rank oldest first (ties by slug), for `order=oldest`: -1 when rank is. Absent
   * on indexes that match nothing.
   */
  oldestRank?(id: number): number;
}

/** The published_after (inclusive) and published_before (exclusive) bounds, epoch ms. */
export interface PublishedBounds {
  afterMs?: number | undefined;
  beforeMs?: number | undefined;
}

/** One row of exposureOrdering: `[id, published_at, section_slug, updated_at]`. */
export type ExposureRow = [number, string, string, string];

let built = 0;

/**
 * What one locale exposes at one content version, in memory: the rows of exposureOrdering (the
 * exposure rule's SQL: published, in an active section), kept in partner order (newest first,
 * ties by slug) with their publication times, so "published_at <= now" is one binary search
 * and a scheduled article appears by itself when its time comes. The one owner of this index:
 * the API's LocaleView (src/content/locale-view.ts) and each search thread
 * (src/search/sqlite/pool/snapshot-views.ts) build it the same way; threads cannot share
 * objects, so each builds its own.
 */
export class LocaleExposure {
  /** Unique per index built in this thread: a new version or a new connection gets a new one. */
  private readonly serial = ++built;
  readonly sectionSlugs: readonly string[];

  private constructor(
    readonly locale: Locale,
    readonly version: number,
    /** The locale's active sections, in editorial order. */
    readonly sections: SectionListRow[],
    /** Every article that is or will become exposed, in partner order, with publication times. */
    readonly all: Ordering,
    /** For each article id, its position in `all` plus one (0: not in it). */
    readonly positions: Int32Array,
    /** For each position in `all`, the index of its section in `sections`. */
    readonly sectionAt: Uint16Array,
  ) {
    this.sectionSlugs = sections.map((s) => s.slug);
  }

  /**
   * Reads the locale's sections and ordering; run it inside consistentRead so both come from one
   * commit. `each` sees every row in partner order, for what a caller keeps beside the index.
   */
  static build(db: Db, locale: Locale, version: number, each?: (row: ExposureRow) => void): LocaleExposure {
    const sections = activeSections(db, locale);
    const sectionIndex = new Map(sections.map((s, i) => [s.slug, i]));
    const ids: number[] = [];
    const times: number[] = [];
    const sectionOf: number[] = [];
    // Rows are streamed, not materialized: on a large snapshot this build is the thread's peak.
    for (const row of exposureOrdering(db, locale)) {
      each?.(row);
      ids.push(row[0]);
      // Stored timestamps are already normalized (`...Z`), which Date.parse reads exactly.
      const time = Date.parse(row[1]);
      times.push(Number.isNaN(time) ? Number.POSITIVE_INFINITY : time);
      sectionOf.push(sectionIndex.get(row[2]) ?? 0);
    }
    const positions = new Int32Array(ids.reduce((max, id) => Math.max(max, id), 0) + 1);
    ids.forEach((id, position) => (positions[id] = position + 1));
    return new LocaleExposure(locale, version, sections, new Ordering(ids, times), positions, Uint16Array.from(sectionOf));
  }

  /** First position exposed at `now`: the articles before it are scheduled for later. */
  start(now: number): number {
    return this.all.start(now);
  }

  /**
   * Which articles are exposed at `now` (in `section`, if given: unknown or inactive ones match
   * nothing; published within `bounds`, if given: a window of positions, since the list is
   * sorted by publication time; and among `within` when given: a key's scope, only articles of
   * these sections).
   */
  exposure(now: number, section: string | undefined, bounds?: PublishedBounds, within?: readonly string[]): ExposureIndex {
    const { from: start, to } = this.all.window(now, bounds?.afterMs, bounds?.beforeMs);
    const wanted = section === undefined ? -1 : this.sectionSlugs.indexOf(section);
    if (section !== undefined && wanted === -1) return { rank: () => -1 };
    if (within !== undefined && section !== undefined && !within.includes(section)) return { rank: () => -1 };
    const { positions, sectionAt } = this;
    const allowed = within === undefined || section !== undefined ? undefined : this.sectionMask(within);
    const rank = (id: number): number => {
      const position = (positions[id] ?? 0) - 1;
      if (position < start || position >= to) return -1;
      if (allowed !== undefined) return allowed[sectionAt[position]!] === 1 ? position : -1;
      return wanted === -1 || sectionAt[position] === wanted ? position : -1;
    };
    return {
      ordered: this.all.ids,
      rank,
      oldestRank: (id: number): number => (rank(id) === -1 ? -1 : this.oldestPositions()[positions[id]! - 1]!),
    };
  }

  /** For each section of `sections` (by index), 1 when its slug is in `slugs`. */
  sectionMask(slugs: readonly string[]): Uint8Array {
    return Uint8Array.from(this.sectionSlugs, (slug) => (slugs.includes(slug) ? 1 : 0));
  }

  private oldestAt: Int32Array | undefined;

  /** For each position newest first, its position oldest first (Ordering.oldestFirst); built on first use. */
  private oldestPositions(): Int32Array {
    if (this.oldestAt) return this.oldestAt;
    const oldest = this.all.oldestFirst();
    const at = new Int32Array(oldest.length);
    for (let i = 0; i < oldest.length; i++) at[this.positions[oldest[i]!]! - 1] = i;
    return (this.oldestAt = at);
  }

  /**
   * A string that changes whenever what the locale exposes may change: a new content version
   * (a new index), or a scheduled article whose time has come. Caches are keyed by it.
   */
  contentTag(now: number): string {
    return `${this.locale}.${this.serial}.${this.start(now)}`;
  }
}
