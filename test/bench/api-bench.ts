import { execFileSync } from 'node:child_process';
import { CORPUS_TERMS } from '../support/cms-fixtures.js';
import { load, throughput, type LoadResult } from './load.js';
import { dist, freePort, memoryOf, portFromStdout, startNode, stop, waitForHttp } from './processes.js';

export interface ApiFigures {
  tool: string;
  pageBytes: number;
  bareHttp: LoadResult;
  bareExpress: LoadResult;
  listRepeated: LoadResult;
  detailRepeated: LoadResult;
  listEveryPage: LoadResult & { pages: number };
  search: LoadResult & { coldMs: Record<string, number> };
  apiRssMb: number;
  apiPeakMb: number;
  /** Peak memory of the API after each phase, to see which one raises it. */
  peakAfter: Record<string, number>;
}

async function bare(kind: 'http' | 'express', bytes: number) {
  const child = startNode('test/bench/bare-servers.js', [kind, String(bytes)], {}, 'pipe');
  const port = await portFromStdout(child);
  return { url: `http://127.0.0.1:${port}/api/v1/articles?page=1&limit=20`, stop: () => stop(child) };
}

/**
 * The API's figures against the snapshot the sync benchmark built: the two bare servers as
 * references, repeated list and detail pages (served from the response cache), every list page
 * once at 200 req/s (never cached), and search at 20 req/s over terms of every selectivity.
 */
export async function benchApi(databasePath: string, totalEn: number): Promise<ApiFigures> {
  const created = JSON.parse(
    execFileSync(process.execPath, [dist('src/cli/keys.js'), 'create', '--create', '--partner', 'Benchmark', '--json'], {
      env: { PATH: process.env.PATH ?? '', DATABASE_PATH: databasePath },
      encoding: 'utf8',
    }),
  ) as { key: string };
  const headers = { 'X-API-Key': created.key };
  const port = await freePort();
  // A rate no request reaches: the limiter runs (and costs) but refuses nothing.
  const api = startNode('src/server.js', [], {
    DATABASE_PATH: databasePath,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    RATE_LIMIT_PER_MINUTE: '1000000000',
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${base}/health`);
    const page = await fetch(`${base}/api/v1/articles?page=1&limit=20`, { headers });
    const pageBytes = (await page.arrayBuffer()).byteLength;
    const firstSlug = ((await (await fetch(`${base}/api/v1/articles?limit=1`, { headers })).json()) as { data: { slug: string }[] }).data[0]!.slug;

    const peakAfter: Record<string, number> = {};
    const mark = (phase: string) => (peakAfter[phase] = memoryOf(api.pid!).peakMb);
    mark('first requests');
    const servers = { http: await bare('http', pageBytes), express: await bare('express', pageBytes) };
    const bareHttp = await throughput(servers.http.url, headers);
    const bareExpress = await throughput(servers.express.url, headers);
    await servers.http.stop();
    await servers.express.stop();

    const listRepeated = await throughput(`${base}/api/v1/articles?page=1&limit=20`, headers);
    const detailRepeated = await throughput(`${base}/api/v1/articles/${firstSlug}`, headers);
    mark('repeated pages');

    // Every page once, at 200 req/s: none of them is in the response cache.
    const pages = Math.ceil(totalEn / 20);
    const urls = Array.from({ length: pages }, (_, i) => `${base}/api/v1/articles?page=${((i * 7919) % pages) + 1}&limit=20`);
    const listEveryPage = { ...(await load({ mode: 'rate', urls, headers, rate: 200, durationMs: 20_000, warmupMs: 0 })), pages };
    mark('every page once');

    // Cold cost of each term first (the first query of a term ranks all its matches).
    const terms = [
      ...Object.values(CORPUS_TERMS.en),
      'laser fem',
      'las',
      'laser system',
      ...Object.values(CORPUS_TERMS.zh).map((t) => `${t}&locale=zh`),
    ];
    const coldMs: Record<string, number> = {};
    for (const term of terms) {
      const t0 = performance.now();
      await fetch(`${base}/api/v1/search?q=${encodeURIComponent(term.split('&')[0]!)}${term.includes('&') ? '&locale=zh' : ''}`, { headers });
      coldMs[term] = performance.now() - t0;
    }
    const searchUrls = terms.flatMap((term) =>
      [1, 2, 3, 50].map((p) => `${base}/api/v1/search?q=${encodeURIComponent(term.split('&')[0]!)}&page=${p}${term.includes('&') ? '&locale=zh' : ''}`),
    );
    const search = { ...(await load({ mode: 'rate', urls: searchUrls, headers, rate: 20, durationMs: 20_000, warmupMs: 0 })), coldMs };

    mark('search');
    const memory = memoryOf(api.pid!);
    return {
      tool: bareHttp.tool,
      pageBytes,
      bareHttp,
      bareExpress,
      listRepeated,
      detailRepeated,
      listEveryPage,
      search,
      apiRssMb: memory.rssMb,
      apiPeakMb: memory.peakMb,
      peakAfter,
    };
  } finally {
    await stop(api);
  }
}
