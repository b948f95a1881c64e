/**
 * A list of articles in partner order (newest `published_at` first, ties by slug), including
 * the ones scheduled for later. Because the list is sorted by publication time, the articles
 * exposed at a given instant are a suffix of it: one binary search finds where it starts, so a
 * scheduled article appears by itself when its time comes and totals need no count(*).
 */
export class Ordering {
  readonly ids: Int32Array;
  readonly times: Float64Array;

  constructor(ids: number[], times: number[]) {
    this.ids = Int32Array.from(ids);
    this.times = Float64Array.from(times);
  }

  /** Index of the first article published at or before `now`. */
  start(now: number): number {
    let lo = 0;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.times[mid] as number) > now) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  visibleCount(now: number): number {
    return this.ids.length - this.start(now);
  }

  /** Ids of one page (1-based) of the articles exposed at `now`, and their total. */
  page(now: number, page: number, limit: number): { ids: number[]; total: number } {
    const start = this.start(now);
    const total = this.ids.length - start;
    const from = start + (page - 1) * limit;
    if (!Number.isSafeInteger(from) || from >= this.ids.length) return { ids: [], total };
    return { ids: Array.from(this.ids.subarray(from, Math.min(from + limit, this.ids.length))), total };
  }

  /** Publication time of the newest exposed article, or undefined when none is. */
  newestVisible(now: number): number | undefined {
    return this.times[this.start(now)];
  }
}
