import type { Db } from '../db/sqlite/connection.js';
import type { SectionListRow } from '../db/snapshot/content.js';
import { LocaleExposure, type ExposureIndex, type PublishedBounds } from '../db/snapshot/locale-exposure.js';
import { Ordering } from '../db/snapshot/ordering.js';
import type { SnapshotStateRow } from '../db/snapshot/schema.js';
import type { Locale } from '../locale.js';
import { parseIsoToMs } from '../lib/time.js';

const EMPTY = new Ordering([], []);

/**
 * What the API knows about one locale at one content version: what it exposes (LocaleExposure,
 * the index the search threads build too), plus what only the API answers from: the ordering of
 * each section, updated_at for `updated_since`, and when the content last changed. Built once
 * per version (a sync that changed something), then shared by every request until the next one.
 */
export class LocaleView {
  private constructor(
    private readonly exposed: LocaleExposure,
    readonly syncedAt: string,
    readonly changedAtMs: number,
    private readonly bySection: Map<string, Ordering>,
    /** For each position in `all`, the article's updated_at (epoch ms), for `updated_since`. */
    private readonly updatedAt: Float64Array,
  ) {}

  /** Orderings of keys' scopes, by their sections (see within). */
  private readonly scoped = new Map<string, Ordering>();

  static build(db: Db, state: SnapshotStateRow & { locale: Locale }): LocaleView {
    const updated: number[] = [];
    const exposed = LocaleExposure.build(db, state.locale, state.version, (row) => updated.push(Date.parse(row[3])));
    const { ids, times } = exposed.all;
    const perSection = exposed.sections.map(() => ({ ids: [] as number[], times: [] as number[] }));
    for (let position = 0; position < ids.length; position++) {
      const bucket = perSection[exposed.sectionAt[position]!]!;
      bucket.ids.push(ids[position]!);
      bucket.times.push(times[position]!);
    }
    const bySection = new Map(exposed.sections.map((s, i) => [s.slug, new Ordering(perSection[i]!.ids, perSection[i]!.times)]));
    return new LocaleView(exposed, state.syncedAt, parseIsoToMs(state.changedAt) ?? 0, bySection, Float64Array.from(updated));
  }

  get locale(): Locale {
    return this.exposed.locale;
  }

  get version(): number {
    return this.exposed.version;
  }

  /** The locale's active sections, in editorial order. */
  get sections(): SectionListRow[] {
    return this.exposed.sections;
  }

  get sectionSlugs(): readonly string[] {
    return this.exposed.sectionSlugs;
  }

  /** Every article of the locale in partner order. */
  get all(): Ordering {
    return this.exposed.all;
  }

  /** The ordering of one section; unknown and inactive sections are empty, not errors. */
  section(slug: string): Ordering {
    return this.bySection.get(slug) ?? EMPTY;
  }

  /**
   * The articles of some sections in partner order (a key's scope), built once per scope and
   * content version: a scoped key's lists and totals then cost what an unscoped key's do.
   */
  within(sections: readonly string[]): Ordering {
    const name = sections.join(',');
    let ordering = this.scoped.get(name);
    if (!ordering) {
      const mask = this.exposed.sectionMask(sections);
      const { ids, times } = this.exposed.all;
      const keptIds: number[] = [];
      const keptTimes: number[] = [];
      for (let position = 0; position < ids.length; position++) {
        if (mask[this.exposed.sectionAt[position]!] !== 1) continue;
        keptIds.push(ids[position]!);
        keptTimes.push(times[position]!);
      }
      ordering = new Ordering(keptIds, keptTimes);
      // Scopes are few (one per licence); the bound only guards against a flood of changes.
      if (this.scoped.size >= 256) this.scoped.clear();
      this.scoped.set(name, ordering);
    }
    return ordering;
  }

  /** The section slug of an exposed article (undefined when the locale does not expose it). */
  sectionOf(id: number): string | undefined {
    const position = (this.exposed.positions[id] ?? 0) - 1;
    return position < 0 ? undefined : this.exposed.sectionSlugs[this.exposed.sectionAt[position]!];
  }

  /** The exposed articles' ids in partner order, and from which position they are exposed at `now`. */
  exposedIds(now: number): { ids: Int32Array; start: number } {
    return { ids: this.exposed.all.ids, start: this.exposed.start(now) };
  }

  /**
   * One page of `ordering` (1-based) among the articles exposed at `now` within the published
   * bounds (and whose updated_at is at or after `updatedSinceMs`, when given), newest or oldest
   * first, and their total: binary searches for the bounds, a pass over them only for
   * `updated_since`, no query.
   */
  page(
    ordering: Ordering,
    now: number,
    filter: { afterMs?: number | undefined; beforeMs?: number | undefined; oldest?: boolean; updatedSinceMs?: number | undefined },
    page: number,
    limit: number,
  ): { ids: number[]; total: number } {
    const since = filter.updatedSinceMs;
    if (since === undefined) return ordering.pageWithin(now, filter, page, limit);
    const { positions } = this.exposed;
    return ordering.pageWithin(now, filter, page, limit, (id) => (this.updatedAt[(positions[id] ?? 0) - 1] ?? -Infinity) >= since);
  }

  /**
   * Which articles are exposed at `now` (in `section`, if given, and within the published
   * bounds, if given), for search engines that filter and order by the snapshot instead of
   * asking SQLite again for every hit.
   */
  exposure(now: number, section: string | undefined, bounds?: PublishedBounds, within?: readonly string[]): ExposureIndex {
    return this.exposed.exposure(now, section, bounds, within);
  }
  /**
   * A string that changes whenever any response for this locale may change: a new content
   * version, or a scheduled article whose time has come. Response caches are keyed by it.
   */
  contentTag(now: number): string {
    return this.exposed.contentTag(now);
  }

  /** When this locale's exposed content last changed: a sync, or a scheduled publication. */
  lastModified(now: number): number {
    return Math.max(this.changedAtMs, this.all.newestVisible(now) ?? 0);
  }
}
