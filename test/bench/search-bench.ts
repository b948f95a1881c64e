import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import Database from 'better-sqlite3';
import { closeSync, openSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { normalizeQuery } from '../../src/search/normalize.js';
import { DEFAULT_CACHE_MB } from '../../src/config/api.js';
import { mulberry32 } from '../support/random.js';
import { load, type LoadResult } from './load.js';
import { dist, freePort, memoryOf, portFromStdout, procfileFlags, startNode, stop, waitForHttp } from './processes.js';

/*
 * The search phases (issue 8): open-loop load (fixed arrival rate; latency counted from each
 * request's scheduled send time, so queueing shows), the API pinned to one core with taskset
 * where it exists and this process (the load generator) to the other. Queries are never
 * repeated: 1 to 3 words drawn Zipf from the corpus vocabulary, in both locales, so the
 * response cache cannot help. Run alone with BENCH_PHASES=search BENCH_DATABASE=<snapshot>.
 */

export interface SearchFigures {
  pinned: boolean;
  workers: number;
  /** Highlights on (the default). */
  unique5: LoadResult;
  unique20: LoadResult;
  /** highlight=false: the same phases without snippets. */
  unique5Plain: LoadResult;
  unique20Plain: LoadResult;
  /** Never-repeated searches at 50/s and 100/s (highlights on), from one key and from KEYS keys in turn. */
  unique50One: LoadResult;
  unique100One: LoadResult;
  unique50Keys: LoadResult;
  unique100Keys: LoadResult;
  /** One key, rising rates (half-length phases) until more than 1% is refused. */
  ramp: { rate: number; result: LoadResult }[];
  /** Each of COLD_TERMS asked once, right after start (highlights on), one at a time. */
  cold: { q: string; ms: number; status: number }[];
  /** Seconds from /health answering until the last of COLD_TERMS was answered. */
  coldSeconds: number;
  /** The same client against a bare node:http server sending a body of a search page's size (clientFloor). */
  clientFloor: { firstMs: number; medianMs: number; bytes: number };
  listAlone: LoadResult;
  listWithSearch: LoadResult;
  searchBesideList: LoadResult;
  pathological: { name: string; ms: number; status: number }[];
  /** MB: after start (/health answering), after each group of phases, and the peak (VmHWM) through all of them. */
  rss: { afterStart: number; before: number; afterSearch: number; afterSections: number; afterQueries: number; peak: number; budgetMb: number };
}

const SECONDS = Number(process.env.BENCH_SEARCH_SECONDS ?? 20);

/**
 * Common words of the bench corpus (test/support/cms-fixtures.ts), one or two at a time: each
 * asked once, the first search of its words since the API started. The last word of a query is
 * a prefix, so each q is a new query even when a word was seen before.
 */
export const COLD_TERMS: { q: string; locale: string }[] = [
  { q: 'laser', locale: 'en' },
  { q: 'fiber laser', locale: 'en' },
  { q: 'system power', locale: 'en' },
  { q: 'wafer pulse', locale: 'en' },
  { q: 'beam optics', locale: 'en' },
  { q: 'optics', locale: 'en' },
  { q: 'power supply', locale: 'en' },
  { q: '激光', locale: 'zh' },
  { q: '光纤 切割', locale: 'zh' },
  { q: 'pulsed', locale: 'en' },
  { q: 'green market', locale: 'en' },
  { q: 'copper busbar', locale: 'en' },
  { q: 'steel sheet', locale: 'en' },
  { q: 'galvo scanner', locale: 'en' },
  { q: 'semiconductor wafer', locale: 'en' },
  { q: 'diode', locale: 'en' },
  { q: '光学', locale: 'zh' },
  { q: '半导体 设备', locale: 'zh' },
];
const KEYS = 4;

/** Words of each locale by frequency, read from a sample of the corpus's titles and excerpts. */
function vocabulary(databasePath: string): Record<'en' | 'zh', string[]> {
  const db = new Database(databasePath, { readonly: true });
  try {
    const out = { en: [] as string[], zh: [] as string[] };
    for (const locale of ['en', 'zh'] as const) {
      const counts = new Map<string, number>();
      const rows = db.prepare(`SELECT title || ' ' || excerpt AS text FROM articles WHERE locale = ? ORDER BY id LIMIT 3000`).pluck().all(locale) as string[];
      for (const text of rows) for (const word of normalizeQuery(text).words) counts.set(word, (counts.get(word) ?? 0) + 1);
      // normalizeQuery keeps ten words per text; enough for a frequency ranking.
      out[locale] = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([w]) => w);
    }
    return out;
  } finally {
    db.close();
  }
}

/** `count` distinct queries of 1-3 words, Zipf by frequency rank, 4 in 5 English. */
export function uniqueQueries(vocab: Record<'en' | 'zh', string[]>, count: number, seed: number): { q: string; locale: string }[] {
  const random = mulberry32(seed);
  const zipf = (words: string[]) => {
    // Inverse-CDF draw for P(rank r) ~ 1/r.
    const h = Math.log(words.length) + 0.5772;
    const r = Math.min(words.length - 1, Math.floor(Math.exp(random() * h)) - 1);
    return words[Math.max(0, r)]!;
  };
  const seen = new Set<string>();
  const out: { q: string; locale: string }[] = [];
  for (let tries = 0; out.length < count && tries < count * 50; tries++) {
    const locale = random() < 0.8 ? 'en' : 'zh';
    const n = 1 + Math.floor(random() * 3);
    const q = Array.from({ length: n }, () => zipf(vocab[locale])).join(' ');
    const key = `${locale}|${q}`;
    // q needs 2 characters at least (a lone Chinese character would be a 400).
    if (seen.has(key) || [...q].length < 2 || normalizeQuery(q).words.length === 0) continue;
    seen.add(key);
    out.push({ q, locale });
  }
  return out;
}

const hasTaskset = () => {
  try {
    execFileSync('sh', ['-c', 'command -v taskset'], { encoding: 'utf8' });
    return true;
  } catch {
    return false;
  }
};

function startPinnedApi(env: Record<string, string>, pinned: boolean): ChildProcess {
  const node = [process.execPath, ...procfileFlags('src/server.js'), dist('src/server.js')];
  const [cmd, ...args] = pinned ? ['taskset', '-c', '0', ...node] : node;
  // BENCH_API_LOG=file keeps the API's request log (one line per request, with its q and
  // responseTime), to find which queries made a phase's tail.
  const log = process.env.BENCH_API_LOG ? openSync(process.env.BENCH_API_LOG, 'a') : 'ignore';
  const child = spawn(cmd!, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', log, 'pipe'] });
  // The child has its own copy of the descriptor.
  if (typeof log === 'number') closeSync(log);
  return child;
}

function cacheSettings(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['CACHE_MB', 'SEARCH_TERM_CACHE_MB']) if (process.env[name]) out[name] = process.env[name]!;
  return out;
}

export async function benchSearch(databasePath: string, totalEn: number): Promise<SearchFigures> {
  const keys = Array.from({ length: KEYS }, (_, i) =>
    (JSON.parse(
      execFileSync(process.execPath, [dist('src/cli/keys.js'), 'create', '--create', '--partner', `Search bench ${i}`, '--json'], {
        env: { PATH: process.env.PATH ?? '', DATABASE_PATH: databasePath },
        encoding: 'utf8',
      }),
    ) as { key: string }).key,
  );
  const headerSets = keys.map((key) => ({ 'X-API-Key': key }));
  const pinned = hasTaskset();
  // The load generator (this process, its threads included) on the other core.
  if (pinned) execFileSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  const port = await freePort();
  // The API's own default (one search thread per core beside the main thread) unless set.
  const workers = process.env.SEARCH_WORKERS ? Number(process.env.SEARCH_WORKERS) : Math.max(1, (pinned ? 1 : availableParallelism()) - 1);
  // Drawn before the API starts, and this process's garbage collected: the cold queries then
  // measure the API right after its start, not this process reading the corpus.
  const vocab = vocabulary(databasePath);
  const queries = uniqueQueries(vocab, 1_600 * SECONDS, 7);
  const floor = await clientFloor(headerSets[0]!, pinned);
  (globalThis as { gc?: () => void }).gc?.();
  const api = startPinnedApi(
    // Rate limits off: these phases measure search capacity and caches, not the per-key rate.
    // CACHE_MB and SEARCH_TERM_CACHE_MB pass through, to measure memory against them.
    { DATABASE_PATH: databasePath, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', SEARCH_WORKERS: String(workers), RATE_LIMIT_PER_MINUTE: '0', ...cacheSettings() },
    pinned,
  );
  const base = `http://127.0.0.1:${port}`;
  try {
    // Generous: on a busy machine an API pinned to one core takes a while to open a large snapshot.
    await waitForHttp(`${base}/health`, 120_000);
    const healthAt = performance.now();
    const afterStart = memoryOf(api.pid!).rssMb;
    let used = 0;
    const searchUrls = (n: number, highlight = true) =>
      queries.slice(used, (used += n)).map(({ q, locale }) => `${base}/api/v1/search?q=${encodeURIComponent(q)}&locale=${locale}${highlight ? '' : '&highlight=false'}`);
    // No warm-up search: the API opens its port once its threads have built their views and
    // rehearsed, so the cold queries below are the first searches it answers, as a partner's.

    const rate = (urls: string[], perSecond: number, headers = headerSets, seconds = SECONDS) =>
      load({ mode: 'rate', urls, headerSets: headers, rate: perSecond, durationMs: seconds * 1000, warmupMs: 0, connections: 64 });
    const oneKey = headerSets.slice(0, 1);
    // Cold: before any load, so no search thread has read these words yet.
    const coldQueries = async (terms: { q: string; locale: string }[]) => {
      const out: SearchFigures['cold'] = [];
      for (const [i, { q, locale }] of terms.entries()) {
        const t0 = performance.now();
        const res = await fetch(`${base}/api/v1/search?q=${encodeURIComponent(q)}&locale=${locale}`, { headers: headerSets[i % KEYS] });
        await res.arrayBuffer();
        out.push({ q, ms: performance.now() - t0, status: res.status });
      }
      return out;
    };
    // Right after start, one at a time.
    const cold = await coldQueries(COLD_TERMS);
    const coldSeconds = (performance.now() - healthAt) / 1000;
    const unique5 = await rate(searchUrls(5 * SECONDS + 5), 5);
    const unique20 = await rate(searchUrls(20 * SECONDS + 5), 20);
    const unique5Plain = await rate(searchUrls(5 * SECONDS + 5, false), 5);
    const unique20Plain = await rate(searchUrls(20 * SECONDS + 5, false), 20);
    const unique50One = await rate(searchUrls(50 * SECONDS + 5), 50, oneKey);
    const unique100One = await rate(searchUrls(100 * SECONDS + 5), 100, oneKey);
    const unique50Keys = await rate(searchUrls(50 * SECONDS + 5), 50);
    const unique100Keys = await rate(searchUrls(100 * SECONDS + 5), 100);
    const ramp: SearchFigures['ramp'] = [];
    for (const perSecond of [150, 200, 300, 400]) {
      const half = Math.max(1, Math.round(SECONDS / 2));
      const result = await rate(searchUrls(perSecond * half + 5), perSecond, oneKey, half);
      ramp.push({ rate: perSecond, result });
      if (refusedShare(result) > 0.01) break;
    }
    const afterSearch = memoryOf(api.pid!).rssMb;

    // Uncached list pages: every (page, limit) pair once.
    const pages = Math.ceil(totalEn / 50);
    let listUsed = 0;
    const listUrls = (n: number) =>
      Array.from({ length: n }, () => {
        const i = listUsed++;
        return `${base}/api/v1/articles?page=${((i * 7919) % pages) + 1}&limit=${41 + (i % 10)}`;
      });
    const listAlone = await rate(listUrls(100 * SECONDS + 10), 100);
    const [listWithSearch, searchBesideList] = await Promise.all([rate(listUrls(100 * SECONDS + 10), 100), rate(searchUrls(5 * SECONDS + 5), 5)]);

    const pathological: SearchFigures['pathological'] = [];
    const oneLetters = Array.from({ length: 100 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(' ');
    const prefixes = (vocab.en.slice(0, 40).map((w) => w.slice(0, 2)).filter((w, i, all) => all.indexOf(w) === i).slice(0, 10)).join(' ');
    const cases: [string, string][] = [
      ['100 one-letter words', oneLetters],
      ['operator soup', '"laser* AND (NEAR(beam optics, 2) OR -fiber) NOT {title}: ^las* "" ** -- ++ \\" \' ; DROP'],
      ['10 common two-letter prefixes', prefixes],
      ['200 characters of Chinese', '激光光纤切割焊接'.repeat(25)],
    ];
    for (const [name, q] of cases) {
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        const res = await fetch(`${base}/api/v1/search?q=${encodeURIComponent(q.slice(0, 200))}${name.includes('Chinese') ? '&locale=zh' : ''}&page=${i + 1}`, { headers: headerSets[i % KEYS] });
        await res.arrayBuffer();
        pathological.push({ name, ms: performance.now() - t0, status: res.status });
      }
    }

    // Memory: 20,000 distinct section values on the list, then 20,000 distinct q values.
    const before = memoryOf(api.pid!).rssMb;
    const pad = 's'.repeat(90);
    const closed = (urls: string[]) => load({ mode: 'closed', urls, headerSets, connections: 4, durationMs: 600_000, warmupMs: 0, stopAfter: urls.length });
    await closed(Array.from({ length: 20_000 }, (_, i) => `${base}/api/v1/articles?section=${pad}${i}`));
    const afterSections = memoryOf(api.pid!).rssMb;
    // Words no article has: each answer is empty and cheap, but each is a new cache entry.
    await closed(Array.from({ length: 20_000 }, (_, i) => `${base}/api/v1/search?q=${encodeURIComponent(`zq${i}x ${pad}`)}`));
    const afterQueries = memoryOf(api.pid!).rssMb;
    const peak = memoryOf(api.pid!).peakMb;
    return { pinned, workers, unique5, unique20, unique5Plain, unique20Plain, unique50One, unique100One, unique50Keys, unique100Keys, ramp, cold, coldSeconds, clientFloor: floor, listAlone, listWithSearch, searchBesideList, pathological, rss: { afterStart, before, afterSearch, afterSections, afterQueries, peak, budgetMb: Number(process.env.CACHE_MB ?? DEFAULT_CACHE_MB) } };
  } finally {
    await stop(api);
    if (pinned) execFileSync('taskset', ['-a', '-p', '-c', `0-${availableParallelism() - 1}`, String(process.pid)], { stdio: 'ignore' });
  }
}

/**
 * What the cold queries' client costs by itself: fetch against the bench's bare node:http
 * server (bare-servers.ts, on the API's core when pinned) sending a body the size of a search
 * page with highlights, with the same headers. A client's first requests cost it more than its
 * later ones (fetch's first took 36 ms here, undici loading and compiling its code), and the
 * first cold query used to carry that: 32-38 ms where a new curl process per query measured
 * 15-20 ms. After this warm-up the cold queries measure the API. Returns the first request's
 * time and the median of the next 20.
 */
async function clientFloor(headers: Record<string, string>, pinned: boolean): Promise<{ firstMs: number; medianMs: number; bytes: number }> {
  const bytes = SEARCH_PAGE_BYTES;
  const bare = startNode('test/bench/bare-servers.js', ['http', String(bytes)], {}, 'pipe', pinned ? ['taskset', '-c', '0'] : []);
  try {
    const url = `http://127.0.0.1:${await portFromStdout(bare)}/api/v1/search?q=laser&locale=en`;
    const times: number[] = [];
    for (let i = 0; i < 21; i++) {
      const t0 = performance.now();
      const res = await fetch(url, { headers });
      await res.arrayBuffer();
      times.push(performance.now() - t0);
    }
    const rest = times.slice(1).sort((a, b) => a - b);
    return { firstMs: times[0]!, medianMs: rest[rest.length >> 1]!, bytes };
  } finally {
    await stop(bare);
  }
}

/** Share of a phase's answers that were 503 search_busy. */
export function refusedShare(r: LoadResult): number {
  return (r.statuses['503'] ?? 0) / Math.max(1, Object.values(r.statuses).reduce((a, b) => a + b, 0));
}

/** About what a page of 20 English hits with highlights weighs on the bench corpus. */
const SEARCH_PAGE_BYTES = 25_000;
