import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchApi, type ApiFigures } from './api-bench.js';
import type { LoadResult } from './load.js';
import { benchLoadWhileSync, loadWhileSyncLines } from './load-while-sync.js';
import { benchSync, type SyncFigures } from './sync-bench.js';

/*
 * `npm run bench`: builds a 100,000-article snapshot with the real worker, then measures the
 * real API on loopback. Figures only, no pass/fail: targets are checked by reading them.
 * BENCH_ARTICLES changes the corpus size (English; Chinese gets a tenth of it).
 */

const en = Number(process.env.BENCH_ARTICLES ?? 100_000);
// An existing snapshot built by an earlier run (same BENCH_ARTICLES): measure the API only.
const reuse = process.env.BENCH_DATABASE;
const counts = { en, zh: Math.round(en / 10) };
const dir = mkdtempSync(join(tmpdir(), 'syndication-bench-'));
const databasePath = reuse ?? join(dir, 'bench.db');

// BENCH_PHASES=a,b runs only those phases: `sync` and `api` (the snapshot build and the API
// figures, together), `load-while-sync`. All of them by default.
const only = process.env.BENCH_PHASES?.split(',').map((p) => p.trim()).filter(Boolean);
const wanted = (phase: string) => !only || only.includes(phase);

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const line = (label: string, r: LoadResult, ref?: LoadResult) =>
  `  ${label.padEnd(34)} ${fmt(r.rps).padStart(8)} req/s   p50 ${fmt(r.p50, 1).padStart(6)} ms   p99 ${fmt(r.p99, 1).padStart(7)} ms` +
  (ref ? `   ${fmt((100 * r.rps) / ref.rps, 1).padStart(5)}% of bare node:http` : '') +
  (r.errors ? `   ${r.errors} errors` : '');

function syncLines(sync: SyncFigures): string[] {
  return [
    '',
    `Sync worker (${fmt(sync.articles)} articles: ${fmt(counts.en)} en + ${fmt(counts.zh)} zh)`,
    `  full sync                          ${fmt(sync.fullSeconds, 1)} s, peak memory ${fmt(sync.fullPeakMb)} MB   (target < 60 s, < 300 MB)`,
    `  incremental sync, ${sync.incrementalChanges} changes        ${fmt(sync.incrementalSeconds, 2)} s, peak memory ${fmt(sync.incrementalPeakMb)} MB   (target < 2 s)`,
  ];
}

function report(sync: SyncFigures | undefined, api: ApiFigures): void {
  const out = [
    ...(sync ? syncLines(sync) : []),
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
    '',
  ];
  process.stdout.write(out.join('\n'));
}

try {
  if (wanted('sync') || wanted('api')) {
    let sync: SyncFigures | undefined;
    if (!reuse) {
      process.stdout.write(`Building the snapshot in ${dir} ...\n`);
      sync = await benchSync(databasePath, counts);
      process.stdout.write(`Snapshot built in ${fmt(sync.fullSeconds, 1)} s; measuring the API ...\n`);
    }
    const api = await benchApi(databasePath, counts.en);
    report(sync, api);
  }
  if (wanted('load-while-sync')) process.stdout.write(`${loadWhileSyncLines(await benchLoadWhileSync(dir, counts)).join('\n')}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
