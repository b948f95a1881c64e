import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchApi, type ApiFigures } from './api-bench.js';
import type { LoadResult } from './load.js';
import { benchSearch, refusedShare, type SearchFigures } from './search-bench.js';
import { benchFeed, feedLines } from './feed-bench.js';
import { benchFastPath, type FastPathFigures, type Measured } from './fast-bench.js';
import { benchLoadWhileSync, loadWhileSyncLines } from './load-while-sync.js';
import { benchSync, type SyncFigures } from './sync-bench.js';

/*
 * `npm run bench`: builds a 100,000-article snapshot with the real worker, then measures the
 * real API on loopback. Figures only, no pass/fail: targets are checked by reading them.
 * BENCH_ARTICLES changes the corpus size (English; Chinese gets a tenth of it).
 * BENCH_PHASES=api,fast runs only those phases (the snapshot is still built unless
 * BENCH_DATABASE names one): `api` (the original API figures), `fast` (the cached fast path
 * against bare node:http, rate limiter on and off), `load-while-sync` (full syncs rewriting 20%
 * of the articles under list and search traffic; builds its own snapshot, so alone it skips
 * the main one), `search` (test/bench/search-bench.ts: open-loop unique search, lists beside search, pathological queries, memory under distinct values),
 * `feed` (test/bench/feed-bench.ts: the change feed, on its own corpus).
 */

const en = Number(process.env.BENCH_ARTICLES ?? 100_000);
// A snapshot kept between runs (same BENCH_ARTICLES): built there and kept when the file does
// not exist yet, reused (the API measured only) when it does.
const kept = process.env.BENCH_DATABASE;
const reuse = kept !== undefined && existsSync(kept) ? kept : undefined;
const counts = { en, zh: Math.round(en / 10) };
const dir = mkdtempSync(join(tmpdir(), 'syndication-bench-'));
const databasePath = kept ?? join(dir, 'bench.db');

const phases = process.env.BENCH_PHASES?.split(',').map((p) => p.trim());
const wants = (phase: string) => !phases || phases.includes(phase);

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const line = (label: string, r: LoadResult, ref?: LoadResult) =>
  `  ${label.padEnd(34)} ${fmt(r.rps).padStart(8)} req/s   p50 ${fmt(r.p50, 1).padStart(6)} ms   p99 ${fmt(r.p99, 1).padStart(7)} ms` +
  (ref ? `   ${fmt((100 * r.rps) / ref.rps, 1).padStart(5)}% of bare node:http` : '') +
  (r.errors ? `   ${r.errors} errors ${JSON.stringify(r.statuses)}` : '');

function syncLines(sync: SyncFigures): string[] {
  return [
    '',
    `Sync worker (${fmt(sync.articles)} articles: ${fmt(counts.en)} en + ${fmt(counts.zh)} zh)`,
    `  full sync                          ${fmt(sync.fullSeconds, 1)} s, peak memory ${fmt(sync.fullPeakMb)} MB   (target < 60 s, <= 256 MB)`,
    `  incremental sync, ${sync.incrementalChanges} changes        ${fmt(sync.incrementalSeconds, 2)} s, peak memory ${fmt(sync.incrementalPeakMb)} MB   (target < 2 s, <= 128 MB)`,
  ];
}

const openLine = (label: string, r: LoadResult) =>
  `  ${label.padEnd(44)} p50 ${fmt(r.p50, 1).padStart(7)} ms   p99 ${fmt(r.p99, 1).padStart(7)} ms   max ${fmt(r.max, 0).padStart(6)} ms   ` +
  Object.entries(r.statuses)
    .map(([s, n]) => `${s}: ${n}` + (Object.keys(r.statuses).length > 1 && r.byStatus?.[s] ? ` (p99 ${fmt(r.byStatus[s]!.p99, 0)} ms)` : ''))
    .join(', ');

function searchLines(s: SearchFigures): string[] {
  return [
    '',
    `Search (open loop; API ${s.pinned ? 'pinned to core 0 with taskset' : 'not pinned'}, ${s.workers} search threads; never-repeated 1-3-word queries, Zipf, en + zh)`,
    `  cold single queries right after start, one at a time (first search of their words, highlights on; the last answered ${fmt(s.coldSeconds, 1)} s after /health): ${s.cold.map((c) => `${c.q} ${fmt(c.ms, 1)} ms${c.status === 200 ? '' : ` (${c.status})`}`).join(', ')}   (target <= 30 ms each)`,
    `    the same client against a bare node:http server (${Math.round(s.clientFloor.bytes / 1024)} KB bodies), warmed there first: its first request ${fmt(s.clientFloor.firstMs, 1)} ms, then median ${fmt(s.clientFloor.medianMs, 1)} ms`,
    openLine('unique search at 5/s, highlights on', s.unique5) + '   (target p99 <= 25 ms, none refused)',
    openLine('unique search at 20/s, highlights on', s.unique20) + '   (target p99 <= 250 ms, <= 1% refused)',
    openLine('unique search at 5/s, highlight=false', s.unique5Plain),
    openLine('unique search at 20/s, highlight=false', s.unique20Plain),
    `  refused (503): ${[s.unique5, s.unique20, s.unique5Plain, s.unique20Plain].map((r) => `${fmt(100 * refusedShare(r), 1)}%`).join(' / ')} (5/s, 20/s; then without highlights)`,
    openLine('unique search at 50/s, one key', s.unique50One) + `   refused ${fmt(100 * refusedShare(s.unique50One), 1)}%`,
    openLine('unique search at 100/s, one key', s.unique100One) + `   refused ${fmt(100 * refusedShare(s.unique100One), 1)}%   (target p99 <= 50 ms, <= 1% refused)`,
    openLine('unique search at 50/s, 4 keys in turn', s.unique50Keys) + `   refused ${fmt(100 * refusedShare(s.unique50Keys), 1)}%`,
    openLine('unique search at 100/s, 4 keys in turn', s.unique100Keys) + `   refused ${fmt(100 * refusedShare(s.unique100Keys), 1)}%`,
    ...s.ramp.map(({ rate, result }) => openLine(`unique search at ${rate}/s, one key (half phase)`, result) + `   refused ${fmt(100 * refusedShare(result), 1)}%`),
    `  highest rate with <= 1% refused, one key: ${fmt(Math.max(0, ...[[50, s.unique50One] as const, [100, s.unique100One] as const, ...s.ramp.map((r) => [r.rate, r.result] as const)].filter(([, r]) => refusedShare(r) <= 0.01).map(([rate]) => rate)))}/s (of the rates tried: 50, 100, then 150-400 until one refused more)`,
    openLine('uncached list at 100/s, alone', s.listAlone),
    openLine('uncached list at 100/s, beside search at 5/s', s.listWithSearch) + `   (list p99 ${fmt(s.listWithSearch.p99 / Math.max(0.001, s.listAlone.p99), 1)}x alone; target <= 2x and <= 50 ms)`,
    openLine('  the search at 5/s beside it', s.searchBesideList),
    ...s.pathological.map((p) => `  pathological: ${p.name.padEnd(31)} ${fmt(p.ms, 1).padStart(7)} ms   status ${p.status}`),
    `  API RSS: ${fmt(s.rss.afterStart)} MB after start, peak ${fmt(s.rss.peak)} MB through all phases (targets <= 256 and <= 300 MB); ${fmt(s.rss.before)} MB before the distinct values, ${fmt(s.rss.afterSearch)} MB after the unique-search phases, ${fmt(s.rss.afterSections)} MB after 20,000 distinct sections, ${fmt(s.rss.afterQueries)} MB after 20,000 distinct q (cache budget ${s.rss.budgetMb} MB)`,
  ];
}

function fastLines(fast: FastPathFigures): string[] {
  const pct = (x: number) => `${fmt(100 * x, 1)}%`;
  const cpu = (m: Measured) => `   ${fmt(m.cpuUsPerRequest, 1).padStart(5)} us CPU/req`;
  const r = fast.ratios;
  return [
    '',
    `Cached fast path (${fast.rounds} rounds, median figures; servers ${fast.pinned ? `on core 0, ${fast.tool} on core 1` : 'not pinned'}; request logging on)`,
    line('bare node:http', fast.bareHttp) + cpu(fast.bareHttp),
    line('list, repeated, rate limiter on', fast.list) + cpu(fast.list),
    line('list, repeated, rate limiting off', fast.listNoLimit) + cpu(fast.listNoLimit),
    line('detail, repeated, rate limiter on', fast.detail) + cpu(fast.detail),
    line('list, repeated, gzip asked', fast.listGzip) + cpu(fast.listGzip),
    `  compressing a 50-item list page once (${fast.compression.plainBytes} bytes): ` +
      Object.entries(fast.compression.codings)
        .map(([coding, c]) => `${coding} ${c.bytes} bytes (${pct(1 - c.bytes / fast.compression.plainBytes)} saved), ${fmt(c.cpuUs / 1000, 2)} ms CPU`)
        .join('; '),
    `  list as a share of bare node:http   ${pct(r.listRps)} of its req/s, ${pct(r.listCpu)} of its requests per CPU second   (target >= 60%, aim 80%)`,
    `  detail as a share of bare node:http ${pct(r.detailRps)} of its req/s, ${pct(r.detailCpu)} of its requests per CPU second`,
    `  with fields (issue 36): the list ?fields=title,url,published_at ${pct(r.listFieldsRps)}, the detail ?fields=title,body_html ${pct(r.detailHtmlRps)} of bare node:http's req/s`,
    `  rate limiter cost on the fast path  ${pct(r.limiterCpu)} more CPU per request, ${pct(r.limiterRps)} fewer req/s   (target <= 10%)`,
    '  (ratios: median over rounds of each round\'s own ratio; on a busy shared machine req/s follow the CPU the',
    '   scheduler gives each server, CPU per request is what the code costs)',
  ];
}

function report(sync: SyncFigures | undefined, api: ApiFigures | undefined, fast: FastPathFigures | undefined, search: SearchFigures | undefined): void {
  const out = [
    ...(sync ? syncLines(sync) : []),
    ...(search ? searchLines(search) : []),
    ...(api ? apiLines(api) : []),
    ...(fast ? fastLines(fast) : []),
    '',
  ];
  process.stdout.write(out.join('\n'));
}

function apiLines(api: ApiFigures): string[] {
  return [
    '',
    `API (list page ${fmt(api.pageBytes)} bytes; throughput measured with ${api.tool})`,
    line('bare node:http', api.bareHttp),
    line('bare Express 5', api.bareExpress, api.bareHttp),
    line('list, repeated page', api.listRepeated, api.bareHttp) + `   ${fmt((100 * api.listRepeated.rps) / api.bareExpress.rps, 1)}% of bare Express`,
    line('detail, repeated', api.detailRepeated, api.bareHttp) + `   ${fmt((100 * api.detailRepeated.rps) / api.bareExpress.rps, 1)}% of bare Express`,
    line(`list, every page once (${fmt(api.listEveryPage.pages)} pages) at 200/s`, api.listEveryPage) + '   (target p99 < 25 ms)',
    line('search, mixed terms at 20/s', api.search) + '   (target p99 < 150 ms)',
    `  search, first query of each term   ${Object.entries(api.search.coldMs).map(([t, ms]) => `${t.replace('&locale=zh', '')} ${fmt(ms)} ms`).join(', ')}`,
    `  API memory                         ${fmt(api.apiRssMb)} MB now, ${fmt(api.apiPeakMb)} MB peak   (target < 250 MB)`,
    `  API peak memory after each phase   ${Object.entries(api.peakAfter).map(([p, mb]) => `${p} ${fmt(mb)} MB`).join(', ')}`,
  ];
}

try {
  if (wants('feed')) {
    process.stdout.write(`${feedLines(await benchFeed(join(dir, 'feed.db'), counts)).join('\n')}\n`);
  }
  if (!phases || phases.some((p) => p !== 'load-while-sync' && p !== 'feed')) {
    let sync: SyncFigures | undefined;
    if (!reuse) {
      process.stdout.write(`Building the snapshot in ${databasePath} ...\n`);
      sync = await benchSync(databasePath, counts);
      process.stdout.write(`Snapshot built in ${fmt(sync.fullSeconds, 1)} s; measuring the API ...\n`);
    }
    const search = wants('search') ? await benchSearch(databasePath, counts.en) : undefined;
    const api = wants('api') ? await benchApi(databasePath, counts.en) : undefined;
    const fast = wants('fast') ? await benchFastPath(databasePath) : undefined;
    report(sync, api, fast, search);
  }
  if (wants('load-while-sync')) process.stdout.write(`${loadWhileSyncLines(await benchLoadWhileSync(dir, counts)).join('\n')}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
