import type { Locale } from '../../src/locale.js';
import type { RawArticle, RawSection } from '../../src/demo/cms-store.js';
import { formatUtcSeconds } from '../../src/lib/time.js';
import type { SyncKind, SyncSummary } from '../../sync/run-sync.js';
import { addKey, startApi, testClock, type TestApi } from './api.js';
import { tempDir } from './snapshot-fixture.js';
import { startTestCms, type TestCms } from '../fakes/test-cms.js';
import { startWorker, type TestWorker } from './worker.js';

/*
 * A test CMS, the worker in-process and the real API on loopback, sharing one movable clock,
 * plus a partner's mirror that follows the change feed: what the feed tests drive.
 */

export interface Article {
  slug: string;
  [field: string]: unknown;
}

export interface ChangesBody {
  data: Array<{ type: 'upsert' | 'delete'; slug: string; changed_at: string; article?: Article }>;
  meta: { locale: string; limit: number; since: string | null; next: string; has_more: boolean };
}

export interface FeedHarness {
  cms: TestCms;
  worker: TestWorker;
  api: TestApi;
  clock: ReturnType<typeof testClock>;
  key: string;
  databasePath: string;
  nowIso(): string;
  sync(kind: SyncKind | 'auto'): Promise<SyncSummary>;
  changes(locale: Locale, since: string | undefined, limit?: number): Promise<{ status: number; body: ChangesBody }>;
  /** Every exposed article of the locale, by slug, read page by page from the list. */
  catalogue(locale: Locale): Promise<Map<string, Article>>;
  close(): Promise<void>;
}

export async function startFeedHarness(options: { start?: string; feedRetentionDays?: number } = {}): Promise<FeedHarness> {
  const dir = tempDir('feed-test-');
  const databasePath = dir.path('snapshot.db');
  const clock = testClock(options.start ?? '2026-11-01T08:00:00Z');
  const cms = await startTestCms();
  const worker = startWorker({ databasePath, cmsUrl: cms.url, clock, pageSize: 7, overlapSeconds: 60 });
  if (options.feedRetentionDays !== undefined) worker.deps.feedRetentionDays = options.feedRetentionDays;
  // The API opens the snapshot lazily; the key goes in through the CLI's own path.
  const { key } = addKey(databasePath);
  const api = await startApi({ databasePath, clock });
  const headers = { 'X-API-Key': key };

  return {
    cms,
    worker,
    api,
    clock,
    key,
    databasePath,
    nowIso: () => formatUtcSeconds(clock()),
    async sync(kind) {
      const summary = await worker.run(kind);
      if (summary.status !== 'succeeded') throw new Error(`${kind} sync failed: ${summary.error}`);
      return summary;
    },
    async changes(locale, since, limit) {
      const params = new URLSearchParams({ locale });
      if (since !== undefined) params.set('since', since);
      if (limit !== undefined) params.set('limit', String(limit));
      const res = await fetch(`${api.url}/api/v1/changes?${params}`, { headers });
      return { status: res.status, body: (await res.json()) as ChangesBody };
    },
    async catalogue(locale) {
      const all = new Map<string, Article>();
      for (let page = 1; ; page++) {
        const res = await fetch(`${api.url}/api/v1/articles?locale=${locale}&limit=50&page=${page}`, { headers });
        if (res.status !== 200) throw new Error(`list answered ${res.status}: ${await res.text()}`);
        const body = (await res.json()) as { data: Article[]; meta: { pages: number } };
        for (const article of body.data) all.set(article.slug, article);
        if (page >= body.meta.pages) return all;
      }
    },
    async close() {
      await api.close();
      worker.close();
      await cms.close();
      dir.cleanup();
    },
  };
}

/** A partner's copy, kept from the feed exactly as docs/partners.md tells partners to. */
export class Mirror {
  readonly articles = new Map<string, Article>();
  cursor: string | undefined;
  /** Every (slug, changed_at, type) received, to check that nothing is handed out twice. */
  readonly received: string[] = [];

  constructor(
    private readonly harness: FeedHarness,
    readonly locale: Locale,
    private readonly limit = 5,
  ) {}

  /** Reads pages until has_more is false; returns the number of pages. */
  async follow(): Promise<number> {
    for (let pages = 1; ; pages++) {
      if (!(await this.readPage())) return pages;
    }
  }

  /** Reads one page and applies it; returns has_more. */
  async readPage(): Promise<boolean> {
    const { status, body } = await this.harness.changes(this.locale, this.cursor, this.limit);
    if (status !== 200) throw new Error(`changes answered ${status}: ${JSON.stringify(body)}`);
    const slugs = body.data.map((c) => c.slug);
    if (new Set(slugs).size !== slugs.length) throw new Error(`a page repeats a slug: ${slugs.join(', ')}`);
    for (const change of body.data) {
      this.received.push(`${change.type} ${change.slug} ${change.changed_at}`);
      if (change.type === 'upsert') this.articles.set(change.slug, change.article!);
      else this.articles.delete(change.slug);
    }
    this.cursor = body.meta.next;
    return body.meta.has_more;
  }
}

export const section = (slug: string, overrides: Partial<RawSection> = {}): RawSection => ({
  id: `sec-${slug}`,
  slug,
  name: `Section ${slug}`,
  description: null,
  active: true,
  position: 1,
  updated_at: '2026-10-01T00:00:00Z',
  ...overrides,
});

export function article(id: string, overrides: Partial<RawArticle> & { updated_at: string }): RawArticle {
  const locale = overrides.locale ?? 'en';
  return {
    id,
    locale,
    slug: `story-${id}`,
    status: 'published',
    title: `Story ${id}`,
    excerpt: `Excerpt ${id}`,
    body_markdown: `Body of ${id}`,
    section_slug: 'news',
    author: 'A. Writer',
    image: null,
    published_at: '2026-10-15T08:00:00Z',
    url: `https://news.example.com/${locale}/${id}`,
    ...overrides,
  };
}
