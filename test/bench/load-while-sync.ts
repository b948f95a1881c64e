import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Agent, request } from 'node:http';
import { startCmsServer } from '../../src/demo/cms-server.js';
import { CmsStore } from '../../src/demo/cms-store.js';
import { fileSizes } from '../../src/db/sqlite/wal.js';
import { LOCALES } from '../../src/locale.js';
import { formatUtcSeconds } from '../../src/lib/time.js';
import { CORPUS_TERMS, corpusSections, generateCorpus } from '../support/cms-fixtures.js';
import { dist, exited, freePort, startNode, stop, waitForHttp } from './processes.js';

/*
 * Load while syncing (issue 9): full syncs that rewrite 20% of the articles while list and
 * search traffic runs against the real API, all as production runs them (child processes,
 * one snapshot file). Figures only: error counts, p99 and max latency of the traffic before
 * and during the syncs (a ratio from the same run), and the WAL and database sizes after
 * each sync. Runs alone with `BENCH_PHASES=load-while-sync npm run bench`.
 */

export interface TrafficFigures {
  requests: number;
  errors: number;
  statuses: Record<string, number>;
  p50: number;
  p99: number;
  max: number;
}

export interface LoadWhileSyncFigures {
  articles: number;
  rewrittenPerSync: number;
  syncs: Array<{ seconds: number; walMb: number; databaseMb: number }>;
  idle: { list: TrafficFigures; search: TrafficFigures };
  during: { list: TrafficFigures; search: TrafficFigures };
  final: { walMb: number; databaseMb: number };
}

const SYNCS = 3;
const LIST_RATE = 100;
const SEARCH_RATE = 20;
const IDLE_SECONDS = 10;

/**
 * Open-loop traffic: one request per 1000/rate ms whatever the answers, latency counted from
 * the scheduled time so that a stall during a sync is not hidden. Stops when `stop()` is called.
 */
function traffic(urls: string[], headers: Record<string, string>, rate: number): { stop(): Promise<TrafficFigures> } {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let sent = 0;
  let inFlight = 0;
  const started = performance.now();
  let running = true;
  let drained: (() => void) | undefined;

  const fire = (url: string, scheduled: number) => {
    inFlight += 1;
    const done = (status: string) => {
      latencies.push(performance.now() - scheduled);
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status !== '200') errors += 1;
      inFlight -= 1;
      if (!running && inFlight === 0) drained?.();
    };
    const req = request(url, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () => done(String(res.statusCode)));
    });
    req.on('error', (error: NodeJS.ErrnoException) => done(error.code ?? 'error'));
    req.end();
  };
  const tick = () => {
    if (!running) return;
    const due = Math.floor(((performance.now() - started) * rate) / 1000);
    while (sent < due) {
      fire(urls[sent % urls.length]!, started + (sent * 1000) / rate);
      sent += 1;
    }
    setTimeout(tick, 2);
  };
  tick();
  return {
    async stop() {
      running = false;
      if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
      agent.destroy();
      latencies.sort((a, b) => a - b);
      const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
      return { requests: latencies.length, errors, statuses, p50: at(0.5), p99: at(0.99), max: latencies.at(-1) ?? 0 };
    },
  };
}

async function fullSync(env: Record<string, string>): Promise<number> {
  const started = performance.now();
  const child = startNode('sync/main.js', ['--once', '--full'], { ...env, LOG_LEVEL: 'warn' });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d));
  const code = await exited(child);
  if (code !== 0) throw new Error(`full sync failed: ${stderr.trim()}`);
  return (performance.now() - started) / 1000;
}

const mb = (bytes: number) => bytes / (1024 * 1024);

export async function benchLoadWhileSync(dir: string, counts: Record<'en' | 'zh', number>): Promise<LoadWhileSyncFigures> {
  const databasePath = join(dir, 'load-while-sync.db');
  const store = new CmsStore();
  for (const locale of LOCALES) {
    for (const section of corpusSections(locale)) store.upsertSection(locale, section);
    store.upsertArticles(generateCorpus({ locale, count: counts[locale], seed: locale === 'en' ? 11 : 12, startAt: '2025-01-01T00:00:00Z', stepMs: 5 * 60_000 }));
  }
  const cms = await startCmsServer({ store });
  const env = { DATABASE_PATH: databasePath, CMS_BASE_URL: cms.url };
  let api: ReturnType<typeof startNode> | undefined;
  try {
    await fullSync(env);
    const { key } = JSON.parse(
      execFileSync(process.execPath, [dist('src/cli/keys.js'), 'create', '--create', '--partner', 'Load while sync', '--json'], {
        env: { PATH: process.env.PATH ?? '', DATABASE_PATH: databasePath },
        encoding: 'utf8',
      }),
    ) as { key: string };
    const headers = { 'X-API-Key': key };
    const port = await freePort();
    // One key sends all the traffic: no per-key rate limit, or it would measure the limiter.
    api = startNode('src/server.js', [], { DATABASE_PATH: databasePath, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' });
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/health`);

    // Pages spread over the whole catalogue (mostly uncached), both locales; search over terms
    // of every selectivity.
    const pagesEn = Math.ceil(counts.en / 20);
    const listUrls = Array.from({ length: 2_000 }, (_, i) =>
      i % 10 === 9
        ? `${base}/api/v1/articles?locale=zh&page=${(i % Math.ceil(counts.zh / 20)) + 1}`
        : `${base}/api/v1/articles?page=${((i * 7919) % pagesEn) + 1}`,
    );
    const searchUrls = [...Object.values(CORPUS_TERMS.en), ...Object.values(CORPUS_TERMS.zh).map((t) => `${t}&locale=zh`)].flatMap((term) =>
      [1, 2, 5].map((p) => `${base}/api/v1/search?q=${encodeURIComponent(term.split('&')[0]!)}&page=${p}${term.includes('&') ? '&locale=zh' : ''}`),
    );

    // A short warm-up (first connections, the first query of each term), not counted.
    const warmup = [traffic(listUrls, headers, LIST_RATE), traffic(searchUrls, headers, SEARCH_RATE)];
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    for (const t of warmup) await t.stop();

    const idleList = traffic(listUrls, headers, LIST_RATE);
    const idleSearch = traffic(searchUrls, headers, SEARCH_RATE);
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const idle = { list: await idleList.stop(), search: await idleSearch.stop() };

    const list = traffic(listUrls, headers, LIST_RATE);
    const search = traffic(searchUrls, headers, SEARCH_RATE);
    const syncs: LoadWhileSyncFigures['syncs'] = [];
    const rewrittenPerSync = Math.round((counts.en + counts.zh) / 5);
    for (let s = 1; s <= SYNCS; s++) {
      // 20% of the articles of each locale get a new title and body, stamped now.
      const now = formatUtcSeconds(Date.now());
      for (const locale of LOCALES) {
        for (let i = s % 5; i < counts[locale]; i += 5) {
          const article = store.getArticle(`art-${locale}-${i + 1}`);
          if (article) store.upsertArticle({ ...article, title: `${article.title.replace(/ \(rev \d+\)$/, '')} (rev ${s})`, body_markdown: `${article.body_markdown}\n\nRevision ${s}.`, updated_at: now });
        }
      }
      const seconds = await fullSync(env);
      const sizes = fileSizes(databasePath);
      syncs.push({ seconds, walMb: mb(sizes.walBytes), databaseMb: mb(sizes.databaseBytes) });
    }
    const during = { list: await list.stop(), search: await search.stop() };
    const sizes = fileSizes(databasePath);
    return { articles: counts.en + counts.zh, rewrittenPerSync, syncs, idle, during, final: { walMb: mb(sizes.walBytes), databaseMb: mb(sizes.databaseBytes) } };
  } finally {
    if (api) await stop(api);
    await new Promise((resolve) => cms.server.close(resolve));
  }
}

export function loadWhileSyncLines(f: LoadWhileSyncFigures): string[] {
  const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
  const row = (label: string, t: TrafficFigures) =>
    `  ${label.padEnd(30)} ${fmt(t.requests).padStart(7)} req   ${fmt(t.errors).padStart(4)} errors   p50 ${fmt(t.p50, 1).padStart(6)} ms   p99 ${fmt(t.p99, 1).padStart(7)} ms   max ${fmt(t.max, 1).padStart(7)} ms` +
    (t.errors ? `   ${JSON.stringify(t.statuses)}` : '');
  return [
    '',
    `Load while syncing (${fmt(f.articles)} articles; ${SYNCS} full syncs each rewriting ${fmt(f.rewrittenPerSync)}; list ${LIST_RATE}/s, search ${SEARCH_RATE}/s)`,
    row(`list, idle (${IDLE_SECONDS} s)`, f.idle.list),
    row('list, during the syncs', f.during.list),
    row(`search, idle (${IDLE_SECONDS} s)`, f.idle.search),
    row('search, during the syncs', f.during.search),
    ...f.syncs.map((s, i) => `  full sync ${i + 1}                    ${fmt(s.seconds, 1).padStart(6)} s   then WAL ${fmt(s.walMb, 1)} MB, database ${fmt(s.databaseMb, 1)} MB`),
    `  after the phase                WAL ${fmt(f.final.walMb, 1)} MB, database ${fmt(f.final.databaseMb, 1)} MB`,
  ];
}
