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

  /** Index of the first article published strictly before `time`. */
  private firstBefore(time: number): number {
    let lo = 0;
    let hi = this.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.times[mid] as number) >= time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * The positions [from, to) of the articles exposed at `now` and published at or after
   * `afterMs` and strictly before `beforeMs` (either may be absent): the list is sorted by
   * publication time, so a range of times is a range of positions, found by binary search.
   */
  window(now: number, afterMs: number | undefined, beforeMs: number | undefined): { from: number; to: number } {
    const from = beforeMs === undefined ? this.start(now) : Math.max(this.start(now), this.firstBefore(beforeMs));
    const to = afterMs === undefined ? this.ids.length : this.firstBefore(afterMs);
    return { from, to: Math.max(from, to) };
  }

  private reversed: Int32Array | undefined;

  /**
   * The ids oldest first, ties (equal publication times) still by slug: the groups of equal
   * times in reverse order, each kept as it is. A group of positions [a, b) sits at [n - b, n - a)
   * here, so a window of times maps to a window of this list. Built on first use.
   */
  oldestFirst(): Int32Array {
    if (this.reversed) return this.reversed;
    const { ids, times } = this;
    const out = new Int32Array(ids.length);
    let written = 0;
    let end = ids.length;
    while (end > 0) {
      let begin = end - 1;
      while (begin > 0 && times[begin - 1] === times[end - 1]) begin -= 1;
      out.set(ids.subarray(begin, end), written);
      written += end - begin;
      end = begin;
    }
    return (this.reversed = out);
  }

  /**
   * One page (1-based) of the articles exposed at `now` within the published bounds, newest or
   * oldest first, and their total; `keep` (by position in this list) filters further, at the
   * cost of a pass over the window.
   */
  pageWithin(
    now: number,
    bounds: { afterMs?: number | undefined; beforeMs?: number | undefined; oldest?: boolean },
    page: number,
    limit: number,
    keep?: (id: number) => boolean,
  ): { ids: number[]; total: number } {
    const { from, to } = this.window(now, bounds.afterMs, bounds.beforeMs);
    const n = this.ids.length;
    const list = bounds.oldest ? this.oldestFirst() : this.ids;
    const [begin, end] = bounds.oldest ? [n - to, n - from] : [from, to];
    const skip = (page - 1) * limit;
    if (!keep) {
      const at = begin + skip;
      if (!Number.isSafeInteger(at) || at >= end) return { ids: [], total: end - begin };
      return { ids: Array.from(list.subarray(at, Math.min(at + limit, end))), total: end - begin };
    }
    const ids: number[] = [];
    let total = 0;
    for (let i = begin; i < end; i++) {
      const id = list[i]!;
      if (!keep(id)) continue;
      if (total >= skip && ids.length < limit) ids.push(id);
      total += 1;
    }
    return { ids, total };
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
