import { activeSections, consistentRead, exposureOrdering } from '../../../db/snapshot/content.js';
import { LocaleVersions } from '../../../db/snapshot/locale-versions.js';
import type { StoreSession } from '../../../db/snapshot/snapshot-store.js';
import type { Locale } from '../../../locale.js';
import type { ExposureIndex } from '../../engine.js';

let builtTables = 0;

/**
 * A search thread's own view of what one locale exposes, at one content version: the same
 * rows as the API's LocaleView (the exposure rule is the SQL of exposureOrdering: published,
 * in an active section), kept in partner order (newest first, ties by slug) with publication
 * times, so "published_at <= now" is a binary search and a scheduled article appears by
 * itself. Search threads cannot share the main thread's objects, so each builds its own.
 */
export class ExposureTable {
  private readonly serial = ++builtTables;

  private constructor(
    readonly version: number,
    private readonly sectionSlugs: string[],
    /** Article ids in partner order. */
    private readonly ids: Int32Array,
    /** Publication times in partner order (descending). */
    private readonly times: Float64Array,
    /** For each article id, its position in partner order plus one (0: not exposed). */
    private readonly positions: Int32Array,
    /** For each position, the index of its section in sectionSlugs. */
    private readonly sectionAt: Uint16Array,
  ) {}

  static build(session: StoreSession, locale: Locale, version: number): ExposureTable {
    return consistentRead(session.db, () => {
      const slugs = activeSections(session.db, locale).map((s) => s.slug);
      const index = new Map(slugs.map((slug, i) => [slug, i]));
      const ids: number[] = [];
      const times: number[] = [];
      const sections: number[] = [];
      for (const [id, publishedAt, sectionSlug] of exposureOrdering(session.db, locale)) {
        ids.push(id);
        const time = Date.parse(publishedAt);
        times.push(Number.isNaN(time) ? Number.POSITIVE_INFINITY : time);
        sections.push(index.get(sectionSlug) ?? 0);
      }
      const positions = new Int32Array(ids.reduce((max, id) => Math.max(max, id), 0) + 1);
      ids.forEach((id, position) => (positions[id] = position + 1));
      return new ExposureTable(version, slugs, Int32Array.from(ids), Float64Array.from(times), positions, Uint16Array.from(sections));
    });
  }

  /** First position exposed at `now`: articles before it are scheduled for later. */
  private start(now: number): number {
    let lo = 0;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.times[mid]! > now) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  exposure(now: number, section: string | undefined): ExposureIndex {
    const start = this.start(now);
    const wanted = section === undefined ? -1 : this.sectionSlugs.indexOf(section);
    if (section !== undefined && wanted === -1) return { rank: () => -1 };
    const { positions, sectionAt } = this;
    return {
      ordered: this.ids,
      rank(id: number): number {
        const position = (positions[id] ?? 0) - 1;
        if (position < start) return -1;
        return wanted === -1 || sectionAt[position] === wanted ? position : -1;
      },
    };
  }

  /** Changes with the content version, and when a scheduled article's time comes. */
  contentTag(now: number): string {
    return `${this.serial}.${this.start(now)}`;
  }
}

/** One ExposureTable per locale, rebuilt when the locale's content version moved, as the API's Catalog does. */
export class SnapshotViews {
  private readonly tables: LocaleVersions<ExposureTable>;

  /** `built` hears of each view built: its locale, content version and the milliseconds it took. */
  constructor(built?: (locale: Locale, version: number, ms: number) => void) {
    this.tables = new LocaleVersions<ExposureTable>((session, locale, state) => ExposureTable.build(session, locale, state.version), built);
  }

  table(session: StoreSession, locale: Locale): ExposureTable {
    return this.tables.get(session, locale);
  }
}
