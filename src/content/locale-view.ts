import type { Db } from '../db/sqlite/connection.js';
import { activeSections, exposureOrdering, type SectionListRow } from '../db/snapshot/content.js';
import type { SnapshotStateRow } from '../db/snapshot/schema.js';
import type { Locale } from '../locale.js';
import type { ExposureIndex } from '../search/engine.js';
import { parseIsoToMs } from '../lib/time.js';
import { Ordering } from '../db/snapshot/ordering.js';

const EMPTY = new Ordering([], []);
let builtViews = 0;

/**
 * What the API knows about one locale at one content version: active sections and the partner
 * ordering of all articles and of each section. Built once per version (a sync that changed
 * something), then shared by every request until the next one.
 */
export class LocaleView {
  readonly sectionSlugs: readonly string[];
  /** Unique per view built in this process: a new version or a new connection gets a new one. */
  private readonly serial = ++builtViews;

  private constructor(
    readonly locale: Locale,
    readonly version: number,
    readonly syncedAt: string,
    readonly changedAtMs: number,
    readonly sections: SectionListRow[],
    readonly all: Ordering,
    private readonly bySection: Map<string, Ordering>,
    /** For each article id, its position in `all` plus one (0: not in the ordering). */
    private readonly positions: Int32Array,
    /** For each position in `all`, the index of its section in `sections`. */
    private readonly sectionAt: Uint16Array,
    /** For each position in `all`, the article's updated_at (epoch ms), for `updated_since`. */
    private readonly updatedAt: Float64Array,
  ) {
    this.sectionSlugs = sections.map((s) => s.slug);
  }

  static build(db: Db, state: SnapshotStateRow & { locale: Locale }): LocaleView {
    const sections = activeSections(db, state.locale);
    const sectionIndex = new Map(sections.map((s, i) => [s.slug, i]));
    const ids: number[] = [];
    const times: number[] = [];
    const sectionOf: number[] = [];
    const updated: number[] = [];
    // Rows are streamed, not materialized: on a large snapshot this build is the API's peak.
    for (const [id, publishedAt, sectionSlug, updatedAt] of exposureOrdering(db, state.locale)) {
      updated.push(Date.parse(updatedAt));
      ids.push(id);
      // Stored timestamps are already normalized (`...Z`), which Date.parse reads exactly.
      const time = Date.parse(publishedAt);
      times.push(Number.isNaN(time) ? Number.POSITIVE_INFINITY : time);
      sectionOf.push(sectionIndex.get(sectionSlug) ?? 0);
    }
    const perSection = sections.map(() => ({ ids: [] as number[], times: [] as number[] }));
    const positions = new Int32Array(ids.reduce((max, id) => Math.max(max, id), 0) + 1);
    ids.forEach((id, position) => {
      positions[id] = position + 1;
      const bucket = perSection[sectionOf[position]!]!;
      bucket.ids.push(id);
      bucket.times.push(times[position]!);
    });
    const bySection = new Map(sections.map((s, i) => [s.slug, new Ordering(perSection[i]!.ids, perSection[i]!.times)]));
    return new LocaleView(
      state.locale,
      state.version,
      state.syncedAt,
      parseIsoToMs(state.changedAt) ?? 0,
      sections,
      new Ordering(ids, times),
      bySection,
      positions,
      Uint16Array.from(sectionOf),
      Float64Array.from(updated),
    );
  }

  /** The ordering of one section; unknown and inactive sections are empty, not errors. */
  section(slug: string): Ordering {
    return this.bySection.get(slug) ?? EMPTY;
  }

  /**
   * One page of `ordering` (1-based) among the articles exposed at `now` whose updated_at is at
   * or after `sinceMs`, and their total: one pass over the exposed articles, no query.
   */
  pageUpdatedSince(ordering: Ordering, now: number, sinceMs: number, page: number, limit: number): { ids: number[]; total: number } {
    const from = (page - 1) * limit;
    const ids: number[] = [];
    let total = 0;
    for (let i = ordering.start(now); i < ordering.ids.length; i++) {
      const id = ordering.ids[i]!;
      if ((this.updatedAt[(this.positions[id] ?? 0) - 1] ?? -Infinity) < sinceMs) continue;
      if (total >= from && ids.length < limit) ids.push(id);
      total += 1;
    }
    return { ids, total };
  }

  /**
   * Which articles are exposed at `now` (in `section`, if given), for search engines that
   * filter and order by the snapshot instead of asking SQLite again for every hit.
   */
  exposure(now: number, section: string | undefined): ExposureIndex {
    const start = this.all.start(now);
    const wanted = section === undefined ? -1 : this.sectionSlugs.indexOf(section);
    if (section !== undefined && wanted === -1) return { rank: () => -1 };
    const { positions, sectionAt } = this;
    return {
      rank(id: number): number {
        const position = (positions[id] ?? 0) - 1;
        if (position < start) return -1;
        return wanted === -1 || sectionAt[position] === wanted ? position : -1;
      },
    };
  }

  /**
   * A string that changes whenever any response for this locale may change: a new content
   * version, or a scheduled article whose time has come. Response caches are keyed by it.
   */
  contentTag(now: number): string {
    return `${this.locale}.${this.serial}.${this.all.start(now)}`;
  }

  /** When this locale's exposed content last changed: a sync, or a scheduled publication. */
  lastModified(now: number): number {
    return Math.max(this.changedAtMs, this.all.newestVisible(now) ?? 0);
  }
}
