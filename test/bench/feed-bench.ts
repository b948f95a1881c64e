import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/app.js';
import { defaultAppSettings } from '../../src/config/api.js';
import { KeysStore } from '../../src/db/keys/keys-store.js';
import { SnapshotStore } from '../../src/db/snapshot/snapshot-store.js';
import { startCmsServer } from '../../src/demo/cms-server.js';
import { CmsStore } from '../../src/demo/cms-store.js';
import { LOCALES } from '../../src/locale.js';
import { formatUtcSeconds } from '../../src/lib/time.js';
import { SqliteFtsEngine } from '../../src/search/sqlite/sqlite-fts.js';
import { signWebhook } from '../../sync/webhook.js';
import { addKey, keysPathFor, memoryLogger } from '../support/api.js';
import { corpusSections, generateCorpus } from '../support/cms-fixtures.js';
import { startWorker } from '../support/worker.js';
import { startNode, stop } from './processes.js';
import { openReader } from '../../src/db/sqlite/connection.js';

/*
 * The change feed's figures (BENCH_PHASES=feed runs this phase alone): the feed's share of a
 * full sync with 20% changed and of an incremental sync of 100 changes (measured inside the
 * same apply transaction, so both numbers come from one run), reading the whole feed from the
 * beginning in pages of 100, a poll with nothing new (uncached, p99), and the time from a
 * signed webhook to the change being visible in the feed, end to end through the real worker.
 */

export interface FeedFigures {
  articles: number;
  full: { totalMs: number; feedMs: number };
  incremental: { totalMs: number; feedMs: number };
  readAllPerSecond: number;
  readAllPages: number;
  pollP99Ms: number;
  pollP50Ms: number;
  webhookToFeedMs: number[];
}

const SECRET = 'bench-webhook-secret-0123456789';
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;

function feedMsOf(lines: string[]): number {
  const line = lines.filter((l) => l.includes('applied to the snapshot')).at(-1);
  return line ? (JSON.parse(line) as { feedMs: number }).feedMs : Number.NaN;
}

export async function benchFeed(databasePath: string, counts: Record<'en' | 'zh', number>): Promise<FeedFigures> {
  const store = new CmsStore();
  for (const locale of LOCALES) {
    for (const section of corpusSections(locale)) store.upsertSection(locale, section);
    store.upsertArticles(generateCorpus({ locale, count: counts[locale], seed: locale === 'en' ? 1 : 2, startAt: '2025-01-01T00:00:00Z', stepMs: 5 * 60_000 }));
  }
  const cms = await startCmsServer({ store });
  const touch = (ids: string[]) => {
    const now = formatUtcSeconds(Date.now());
    for (const id of ids) {
      const a = store.getArticle(id);
      if (a) store.upsertArticle({ ...a, title: `${a.title} (edited)`, updated_at: now });
    }
  };
  try {
    // A one-second overlap: an incremental sync then reads only what changed since the last one.
    const worker = startWorker({ databasePath, cmsUrl: cms.url, pageSize: 100, overlapSeconds: 1, maxResponseBytes: 32 << 20, logLevel: 'info' });
    const run = async (kind: 'full' | 'incremental') => {
      const summary = await worker.run(kind);
      if (summary.status !== 'succeeded') throw new Error(`${kind} sync failed: ${summary.error}`);
      return { totalMs: summary.durationMs, feedMs: feedMsOf(worker.logs) };
    };
    await run('full');
    // 20% of the English articles changed, then a full sync.
    touch(Array.from({ length: Math.floor(counts.en / 5) }, (_, i) => `art-en-${i * 5 + 1}`));
    await new Promise((r) => setTimeout(r, 1_100));
    const full = await run('full');
    await new Promise((r) => setTimeout(r, 2_100));
    touch(Array.from({ length: 100 }, (_, i) => `art-en-${i * 37 + 2}`));
    const incremental = await run('incremental');
    worker.close();

    const key = addKey(databasePath, 'Bench').key;
    const { logger } = memoryLogger('warn');
    const snapshot = new SnapshotStore(databasePath, 2_000, logger, openReader);
    const keysStore = new KeysStore(keysPathFor(databasePath), 2_000, logger);
    // The response cache off: every read below costs what a first request costs.
    const app = createApp({ ...defaultAppSettings(), store: snapshot, keysStore, engine: new SqliteFtsEngine(), logger, responseCacheBytes: 0 });
    const server = createServer(app).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/changes?locale=en&limit=100`;
    const headers = { 'X-API-Key': key };
    const page = async (since?: string) =>
      (await (await fetch(since ? `${base}&since=${since}` : base, { headers })).json()) as { data: unknown[]; meta: { next: string; has_more: boolean } };

    let cursor: string | undefined;
    let read = 0;
    let pages = 0;
    const started = performance.now();
    for (;;) {
      const body = await page(cursor);
      read += body.data.length;
      pages += 1;
      cursor = body.meta.next;
      if (!body.meta.has_more) break;
    }
    const readAllPerSecond = read / ((performance.now() - started) / 1000);

    const polls: number[] = [];
    for (let i = 0; i < 300; i++) {
      const t = performance.now();
      await page(cursor);
      polls.push(performance.now() - t);
    }
    server.close();

    // Webhook to feed, end to end: the real worker process with its webhook, the API above.
    const child = startNode('sync/main.js', [], {
      DATABASE_PATH: databasePath, CMS_BASE_URL: cms.url, SYNC_CRON: '0 0 1 1 *', SYNC_FULL_CRON: '0 0 1 1 *',
      WEBHOOK_PORT: '0', WEBHOOK_SECRET: SECRET, LOG_LEVEL: 'info', SYNC_OVERLAP_SECONDS: '1',
    }, 'pipe');
    const webhookToFeedMs: number[] = [];
    try {
      const hookPort = await new Promise<number>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d: Buffer) => {
          out += d;
          const m = /"webhookPort":(\d+)/.exec(out);
          if (m && /incremental sync succeeded/.test(out)) resolve(Number(m[1]));
        });
        child.once('exit', (code) => reject(new Error(`worker exited ${code}`)));
      });
      const api = createServer(createApp({ ...defaultAppSettings(), store: new SnapshotStore(databasePath, 2_000, logger, openReader), keysStore, engine: new SqliteFtsEngine(), logger, responseCacheBytes: 0 })).listen(0, '127.0.0.1');
      await new Promise((r) => api.once('listening', r));
      const feed = `http://127.0.0.1:${(api.address() as AddressInfo).port}/api/v1/changes?locale=en&limit=100`;
      let since = cursor!;
      for (let i = 0; i < 5; i++) {
        const id = `art-en-${1000 + i}`;
        touch([id]);
        const slug = store.getArticle(id)!.slug;
        const body = JSON.stringify({ event: 'article.updated', id });
        const ts = Math.floor(Date.now() / 1000);
        const t = performance.now();
        const res = await fetch(`http://127.0.0.1:${hookPort}/hooks/cms`, {
          method: 'POST', body, headers: { 'X-Webhook-Timestamp': String(ts), 'X-Webhook-Signature': signWebhook(SECRET, ts, body) },
        });
        if (res.status !== 202) throw new Error(`webhook answered ${res.status}`);
        for (let polls = 0; ; polls++) {
          const got = (await (await fetch(`${feed}&since=${since}`, { headers })).json()) as { data: Array<{ slug: string }>; meta: { next: string } };
          since = got.meta.next;
          if (got.data.some((c) => c.slug === slug)) break;
          if (polls > 3_000) throw new Error('the change never reached the feed');
          await new Promise((r) => setTimeout(r, 20));
        }
        webhookToFeedMs.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 1_100));
      }
      api.close();
    } finally {
      await stop(child);
      snapshot.close();
      keysStore.close();
    }
    return {
      articles: counts.en + counts.zh,
      full,
      incremental,
      readAllPerSecond,
      readAllPages: pages,
      pollP99Ms: percentile(polls, 99),
      pollP50Ms: percentile(polls, 50),
      webhookToFeedMs,
    };
  } finally {
    await cms.close();
  }
}

export function feedLines(f: FeedFigures): string[] {
  const pct = (part: number, whole: number) => `${((100 * part) / Math.max(1, whole - part)).toFixed(1)}%`;
  return [
    '',
    `Change feed (${f.articles.toLocaleString('en-US')} articles)`,
    `  full sync, 20% changed             ${(f.full.totalMs / 1000).toFixed(1)} s, of which feed ${Math.round(f.full.feedMs)} ms (+${pct(f.full.feedMs, f.full.totalMs)})   (target +10%)`,
    `  incremental, 100 changes           ${Math.round(f.incremental.totalMs)} ms, of which feed ${Math.round(f.incremental.feedMs)} ms (+${pct(f.incremental.feedMs, f.incremental.totalMs)})   (target +10%)`,
    `  whole feed from the beginning      ${Math.round(f.readAllPerSecond).toLocaleString('en-US')} articles/s (${f.readAllPages} pages of 100, uncached)`,
    `  poll with nothing new (uncached)   p50 ${f.pollP50Ms.toFixed(2)} ms, p99 ${f.pollP99Ms.toFixed(2)} ms`,
    `  signed webhook -> change in feed   ${f.webhookToFeedMs.map((ms) => `${Math.round(ms)} ms`).join(', ')}   (target <= 10 s)`,
  ];
}
