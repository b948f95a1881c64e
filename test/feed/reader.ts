import type { Locale } from '../../src/locale.js';
import type { Article, FeedHarness } from '../support/feed-harness.js';
import { query } from '../support/worker.js';

/*
 * A partner's reader of the change feed for the pruning tests: unlike the harness's Mirror, a
 * refusal is an answer to look at, not a failure, and it keeps every change of its current read.
 */

export class FeedReader {
  readonly copy = new Map<string, Article>();
  /** Every change of the read since the last start from the beginning, as `type slug`. */
  readonly changes: string[] = [];
  cursor: string | undefined;
  /** Reads from the beginning done so far (the first start included). */
  starts = 0;

  constructor(
    private readonly h: FeedHarness,
    readonly locale: Locale,
    readonly limit: number,
  ) {}

  /** Reads one page and applies it; returns the status and, on 200, has_more. */
  async page(): Promise<{ status: number; hasMore: boolean }> {
    if (this.cursor === undefined) this.starts += 1;
    const { status, body } = await this.h.changes(this.locale, this.cursor, this.limit);
    if (status !== 200) {
      const code = (body as unknown as { error?: { code?: string } }).error?.code;
      if (status !== 400 || code !== 'invalid_cursor') throw new Error(`changes answered ${status}: ${JSON.stringify(body)}`);
      return { status, hasMore: false };
    }
    for (const change of body.data) {
      this.changes.push(`${change.type} ${change.slug}`);
      if (change.type === 'upsert') this.copy.set(change.slug, change.article!);
      else this.copy.delete(change.slug);
    }
    this.cursor = body.meta.next;
    return { status, hasMore: body.meta.has_more };
  }

  /** Reads up to `pages` pages (to the head when absent); returns 400 on the first refusal, else 200. */
  async read(pages = Infinity): Promise<number> {
    for (let n = 0; n < pages; n++) {
      const { status, hasMore } = await this.page();
      if (status !== 200) return status;
      if (!hasMore) break;
    }
    return 200;
  }

  /** Forgets the copy and reads from the beginning to the head, as the guide says on invalid_cursor. */
  async restart(): Promise<number> {
    this.copy.clear();
    this.changes.length = 0;
    this.cursor = undefined;
    return this.read();
  }
}

/** The slugs whose deletes the feed of the locale still holds. */
export function retainedDeletes(h: FeedHarness, locale: Locale): string[] {
  return query<{ slug: string }>(h.databasePath, `SELECT slug FROM feed_entries WHERE locale = ? AND kind = 'delete' ORDER BY slug`, locale).map(
    (r) => r.slug,
  );
}
