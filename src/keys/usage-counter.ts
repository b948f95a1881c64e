import Database from 'better-sqlite3';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.js';
import { USAGE_COLUMNS, utcDay, writeUsage } from '../db/keys/usage-counts.js';
import { isCorruption } from '../db/sqlite/reopening-reader.js';
import { detailQuery } from '../http/endpoints/query-schemas.js';
import type { RequestContext } from '../http/pipeline/context.js';
import { parseQuery } from '../http/endpoints/parse-query.js';
import { ARTICLE_SLUG_AT, ROUTES, type Route } from '../http/endpoints/routes-table.js';

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
// As for the last-used times: a flush may wait this long for the CLI's write lock.
const WRITER_BUSY_TIMEOUT_MS = 50;
const PRUNE_EVERY_MS = 3_600_000;

const COLUMN = Object.fromEntries(USAGE_COLUMNS.map((c, i) => [c, i])) as Record<(typeof USAGE_COLUMNS)[number], number>;
const ENDPOINT = new Map<Route, number>([
  [ROUTES.articles, COLUMN.articles],
  [ROUTES.article, COLUMN.article],
  [ROUTES.categories, COLUMN.categories],
  [ROUTES.search, COLUMN.search],
  [ROUTES.changes, COLUMN.changes],
]);

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
export class UsageCounter {
  private days = new Map<string, DayCounts>();
  private current: DayCounts | undefined;
  private currentStart = 0;
  private currentEnd = 0;
  private pendingArticles = 0;
  private droppedArticles = false;
  private writer: Database.Database | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failing = false;
  private lastPrune = -Infinity;

  constructor(
    private readonly path: string,
    private readonly logger: Logger,
    private readonly intervalMs = USAGE_FLUSH_INTERVAL_MS,
    /** Told of a write that failed because the file is damaged or not a database. */
    private readonly onDamaged: (error: unknown) => void = () => {},
    private readonly clock: () => number = Date.now,
  ) {}

  /** The per-response hook (src/app.ts): counts a response that was answered to a known key. */
  readonly responded = (req: IncomingMessage, res: ServerResponse, context: RequestContext): void => {
    const key = context.key;
    if (key === undefined || !res.headersSent) return;
    const status = res.statusCode;
    const route = context.route;
    this.count(key.id, context.startedAt, route, status, route === ROUTES.article && (status === 200 || status === 304) ? req : undefined);
  };

  private count(keyId: number, at: number, route: Route | undefined, status: number, articleRead: IncomingMessage | undefined): void {
    const day = at >= this.currentStart && at < this.currentEnd ? this.current! : this.dayOf(at);
    let counts = day.keys.get(keyId);
    if (counts === undefined) day.keys.set(keyId, (counts = new Float64Array(USAGE_COLUMNS.length)));
    const endpoint = route === undefined ? undefined : ENDPOINT.get(route);
    if (endpoint !== undefined) counts[endpoint]! += 1;
    if (status === 304) counts[COLUMN.not_modified]! += 1;
    else if (status >= 500) counts[COLUMN.server_errors]! += 1;
    else if (status >= 400) counts[COLUMN.client_errors]! += 1;
    if (articleRead !== undefined) this.articleRead(day, keyId, articleRead);
    this.start();
  }

  private articleRead(day: DayCounts, keyId: number, req: IncomingMessage): void {
    if (this.pendingArticles >= MAX_PENDING_ARTICLES) {
      this.droppedArticles = true;
      return;
    }
    const article = articleOf(req);
    if (article === undefined) return;
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

  private start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.flush(), this.intervalMs);
    this.timer.unref();
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
      this.writer ??= this.open();
      writeUsage(this.writer, toBatch(batch), prune);
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

  /** Writes what is pending and stops the timer (on shutdown). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.flush();
    this.closeWriter();
  }

  private open(): Database.Database {
    const sqlite = new Database(this.path, { fileMustExist: true });
    sqlite.pragma(`busy_timeout = ${WRITER_BUSY_TIMEOUT_MS}`);
    return sqlite;
  }

  /** Forgets the writer connection (the file may have been replaced); the next flush reopens it. */
  closeWriter(): void {
    try {
      this.writer?.close();
    } catch {
      // Discarded either way.
    }
    this.writer = undefined;
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

/**
 * `locale slug` of an article URL, as the route read them (the slug decoded, the locale
 * parsed by the same schema), remembered per URL: a repeated article (the cached path) costs
 * a Map lookup, and the same string each time, whose hash the Set has already computed.
 */
const articleOfUrl = new Map<string, string>();
const MAX_REMEMBERED_URLS = 10_000;

function articleOf(req: IncomingMessage): string | undefined {
  const url = req.url!;
  const known = articleOfUrl.get(url);
  if (known !== undefined) return known;
  try {
    const query = url.indexOf('?');
    let end = query === -1 ? url.length : query;
    if (url.charCodeAt(end - 1) === 47) end -= 1;
    const slug = decodeURIComponent(url.slice(ARTICLE_SLUG_AT, end));
    const { locale } = parseQuery(req, detailQuery);
    const article = `${locale} ${slug}`;
    if (articleOfUrl.size >= MAX_REMEMBERED_URLS) articleOfUrl.clear();
    articleOfUrl.set(url, article);
    return article;
  } catch {
    // A 200 was answered for this URL, so it parses; nothing to count otherwise.
    return undefined;
  }
}
