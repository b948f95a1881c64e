import type { Logger } from '../../logger.js';
import { USAGE_COLUMNS, utcDay, writeUsage } from './usage-counts.js';
import { isCorruption } from '../sqlite/reopening-reader.js';
import { BackgroundWriter } from './background-writer.js';

/**
 * How often the counts are written. A crash (kill -9, a power cut) loses what was counted
 * since the last write: at most this long, plus a write under way (docs/editors.md#usage;
 * measured in test/usage/usage-crash.test.ts).
 */
export const USAGE_FLUSH_INTERVAL_MS = 2_000;
/**
 * Articles remembered between two writes, over all keys: past it, further articles of the
 * interval are not remembered (their requests are still counted), so a flood of distinct
 * slugs cannot grow the API's memory. About 100 bytes each: 10 MB at most.
 */
export const MAX_PENDING_ARTICLES = 100_000;
const PRUNE_EVERY_MS = 3_600_000;

const COLUMN = Object.fromEntries(USAGE_COLUMNS.map((c, i) => [c, i])) as Record<(typeof USAGE_COLUMNS)[number], number>;
/** The endpoints counted per request, as the contract names them. */
export type UsageEndpoint = 'articles' | 'article' | 'categories' | 'search' | 'changes';

interface DayCounts {
  day: string;
  /** Counts per key, one slot per USAGE_COLUMNS. */
  keys: Map<number, Float64Array>;
  /** Per key, the articles read, as `locale slug` (articleOf). */
  articles: Map<number, Set<string>>;
}

/**
 * Counts each keyed response by key and UTC day, in memory, and writes the counts to the
 * keys database every USAGE_FLUSH_INTERVAL_MS in one transaction, on a connection of its
 * own, off the request path: a response costs a Map lookup and two additions (an article read
 * adds a Set insert). A failed write keeps its counts for the next one and is logged once;
 * `close` writes what is left (on SIGTERM).
 */
export class UsageCounter extends BackgroundWriter {
  private days = new Map<string, DayCounts>();
  private current: DayCounts | undefined;
  private currentStart = 0;
  private currentEnd = 0;
  private pendingArticles = 0;
  private droppedArticles = false;
  private failing = false;
  private lastPrune = -Infinity;

  constructor(
    path: string,
    private readonly logger: Logger,
    intervalMs = USAGE_FLUSH_INTERVAL_MS,
    /** Told of a write that failed because the file is damaged or not a database. */
    private readonly onDamaged: (error: unknown) => void = () => {},
    private readonly clock: () => number = Date.now,
  ) {
    super(path, intervalMs);
  }

  /**
   * Counts one response to a known key (the per-response hook, src/http/pipeline/usage-hook.ts):
   * its endpoint, if it is one of the five, its status, and the article read (`locale slug`) for a
   * 200 or 304 of the single article.
   */
  count(keyId: number, at: number, endpoint: UsageEndpoint | undefined, status: number, article: string | undefined): void {
    const day = at >= this.currentStart && at < this.currentEnd ? this.current! : this.dayOf(at);
    let counts = day.keys.get(keyId);
    if (counts === undefined) day.keys.set(keyId, (counts = new Float64Array(USAGE_COLUMNS.length)));
    if (endpoint !== undefined) counts[COLUMN[endpoint]]! += 1;
    if (status === 304) counts[COLUMN.not_modified]! += 1;
    else if (status >= 500) counts[COLUMN.server_errors]! += 1;
    else if (status >= 400) counts[COLUMN.client_errors]! += 1;
    if (article !== undefined) this.articleRead(day, keyId, article);
    this.startTimer();
  }

  private articleRead(day: DayCounts, keyId: number, article: string): void {
    if (this.pendingArticles >= MAX_PENDING_ARTICLES) {
      this.droppedArticles = true;
      return;
    }
    let read = day.articles.get(keyId);
    if (read === undefined) day.articles.set(keyId, (read = new Set()));
    if (!read.has(article)) {
      read.add(article);
      this.pendingArticles += 1;
    }
  }

  private dayOf(at: number): DayCounts {
    const name = utcDay(at);
    let day = this.days.get(name);
    if (!day) this.days.set(name, (day = { day: name, keys: new Map(), articles: new Map() }));
    const start = Date.parse(`${name}T00:00:00Z`);
    // The newest day is the one kept at hand: a request of the day before, late, is looked up.
    if (start >= this.currentStart) {
      this.current = day;
      this.currentStart = start;
      this.currentEnd = start + 86_400_000;
    }
    return day;
  }

  /** Writes the counts gathered since the last write. Never throws. */
  flush(): void {
    if (this.days.size === 0) return;
    const batch = this.days;
    this.days = new Map();
    this.current = undefined;
    this.currentStart = this.currentEnd = 0;
    this.pendingArticles = 0;
    const now = this.clock();
    const prune = now - this.lastPrune >= PRUNE_EVERY_MS ? { today: utcDay(now) } : undefined;
    try {
      writeUsage(this.connection(), toBatch(batch), prune);
      if (prune) this.lastPrune = now;
      if (this.failing) this.logger.info({ store: 'keys' }, 'usage counts written again');
      this.failing = false;
      if (this.droppedArticles) {
        this.logger.warn({ store: 'keys', max: MAX_PENDING_ARTICLES }, 'more articles read between two usage writes than remembered: distinct article counts are low for this interval');
        this.droppedArticles = false;
      }
    } catch (error) {
      this.keep(batch);
      this.closeWriter();
      if (!this.failing) {
        this.logger.warn({ store: 'keys', reason: (error as { code?: string }).code ?? (error as Error).message }, 'could not write usage counts; will retry');
      }
      this.failing = true;
      if (isCorruption(error)) this.onDamaged(error);
    }
  }

  /** Puts a batch that could not be written back in front of what was counted since. */
  private keep(batch: Map<string, DayCounts>): void {
    for (const [name, old] of batch) {
      const day = this.days.get(name);
      if (!day) {
        this.days.set(name, old);
        for (const read of old.articles.values()) this.pendingArticles += read.size;
        continue;
      }
      for (const [keyId, counts] of old.keys) {
        const now = day.keys.get(keyId);
        if (!now) day.keys.set(keyId, counts);
        else for (let i = 0; i < counts.length; i++) now[i]! += counts[i]!;
      }
      for (const [keyId, read] of old.articles) {
        let into: Set<string> | undefined = day.articles.get(keyId);
        if (!into) day.articles.set(keyId, (into = new Set<string>()));
        for (const article of read) if (!into.has(article)) (into.add(article), (this.pendingArticles += 1));
      }
    }
  }
}

function toBatch(days: Map<string, DayCounts>) {
  const list = [...days.values()];
  return {
    counts: list.flatMap((d) => [...d.keys].map(([keyId, counts]) => ({ keyId, day: d.day, counts }))),
    articles: list.flatMap((d) =>
      [...d.articles].flatMap(([keyId, read]) =>
        [...read].map((article) => {
          const space = article.indexOf(' ');
          return { keyId, day: d.day, locale: article.slice(0, space), slug: article.slice(space + 1) };
        }),
      ),
    ),
  };
}
