import { execFileSync, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { compressionCost, type CompressionFigures } from './compression-cost.js';
import { findTaskset, throughput, type LoadResult } from './load.js';
import { cpuMsOf, dist, freePort, portFromStdout, startNode, stop, waitForHttp } from './processes.js';

/*
 * The cached fast path against bare node:http, in one run: the same repeated list page from
 * the API with its rate limiter on (a rate no request reaches, so every request pays for the
 * check and the headers), the API with rate limiting off, and a bare node:http server sending
 * a body of the same size. Servers are pinned to core 0 and wrk to core 1 where taskset
 * exists; targets are measured in turns, several rounds, and each figure is the median of its
 * rounds, so that a neighbour's load on the shared machine hits all of them alike. Besides
 * req/s, each server's CPU time per request is read from /proc: on a busy shared machine the
 * rates follow the CPU the scheduler happens to give, while CPU per request is what the code
 * costs. Request logging stays on (LOG_LEVEL=info; the lines go to /dev/null).
 */

export type Measured = LoadResult & { cpuUsPerRequest: number; tool: string };

export interface FastPathFigures {
  rounds: number;
  pinned: boolean;
  /** What generated the load: wrk, or the built-in generator when wrk is missing. */
  tool: string;
  /** Medians over the rounds of each round's own ratios (measured minutes apart at most). */
  ratios: {
    listRps: number;
    listCpu: number;
    detailRps: number;
    detailCpu: number;
    limiterCpu: number;
    limiterRps: number;
    /** The cached list with `fields`, the detail with `fields=title,body_html` (issue 36). */
    listFieldsRps: number;
    detailHtmlRps: number;
  };
  bareHttp: Measured;
  list: Measured;
  listNoLimit: Measured;
  detail: Measured;
  listFields: Measured;
  detailHtml: Measured;
  /** The same list page asked with Accept-Encoding: gzip (compressed once, then kept). */
  listGzip: Measured;
  compression: CompressionFigures;
}

const ROUNDS = Number(process.env.BENCH_FAST_ROUNDS ?? 3);
const SECONDS = 4;

function median(results: Measured[]): Measured {
  return [...results].sort((a, b) => a.rps - b.rps)[Math.floor(results.length / 2)]!;
}

async function measure(url: string, headers: Record<string, string>, server: ChildProcess): Promise<Measured> {
  let cpuMs = 0;
  const result = await throughput(url, headers, SECONDS, {
    cpus: '1',
    measuring: () => {
      const before = cpuMsOf(server.pid!);
      return () => (cpuMs = cpuMsOf(server.pid!) - before);
    },
  });
  return { ...result, cpuUsPerRequest: (cpuMs * 1000) / Math.max(1, result.requests) };
}

async function startApi(databasePath: string, perMinute: number, pin: string[]) {
  const port = await freePort();
  const child = startNode(
    'src/server.js',
    [],
    { DATABASE_PATH: databasePath, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: String(perMinute) },
    'ignore',
    pin,
  );
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/health`);
  return { base, child };
}

export async function benchFastPath(databasePath: string): Promise<FastPathFigures> {
  const created = JSON.parse(
    execFileSync(process.execPath, [dist('src/cli/keys.js'), 'create', '--create', '--partner', 'Fast path benchmark', '--json'], {
      env: { PATH: process.env.PATH ?? '', DATABASE_PATH: databasePath },
      encoding: 'utf8',
    }),
  ) as { key: string };
  const headers = { 'X-API-Key': created.key };
  const taskset = findTaskset();
  const pin = taskset ? [taskset, '-c', '0'] : [];
  const servers: ChildProcess[] = [];
  try {
    const limited = await startApi(databasePath, 1_000_000_000, pin);
    servers.push(limited.child);
    const unlimited = await startApi(databasePath, 0, pin);
    servers.push(unlimited.child);
    const listPath = '/api/v1/articles?page=1&limit=20';
    const page = await fetch(`${limited.base}${listPath}`, { headers });
    const pageBytes = (await page.arrayBuffer()).byteLength;
    const first = (await (await fetch(`${limited.base}/api/v1/articles?limit=1`, { headers })).json()) as { data: { slug: string }[] };
    const detailPath = `/api/v1/articles/${first.data[0]!.slug}`;
    const bare = startNode('test/bench/bare-servers.js', ['http', String(pageBytes)], {}, 'pipe', pin);
    servers.push(bare);
    const bareUrl = `http://127.0.0.1:${await portFromStdout(bare)}${listPath}`;
    const listFieldsPath = `${listPath}&fields=title,url,published_at`;
    const detailHtmlPath = `${detailPath}?fields=title,body_html`;
    const runs: Record<'bareHttp' | 'list' | 'listNoLimit' | 'detail' | 'listFields' | 'detailHtml' | 'listGzip', Measured[]> = {
      bareHttp: [],
      list: [],
      listNoLimit: [],
      detail: [],
      listFields: [],
      detailHtml: [],
      listGzip: [],
    };
    for (let round = 0; round < ROUNDS; round++) {
      runs.bareHttp.push(await measure(bareUrl, headers, bare));
      runs.list.push(await measure(`${limited.base}${listPath}`, headers, limited.child));
      runs.listNoLimit.push(await measure(`${unlimited.base}${listPath}`, headers, unlimited.child));
      runs.detail.push(await measure(`${limited.base}${detailPath}`, headers, limited.child));
      runs.listFields.push(await measure(`${limited.base}${listFieldsPath}`, headers, limited.child));
      runs.detailHtml.push(await measure(`${limited.base}${detailHtmlPath}`, headers, limited.child));
      runs.listGzip.push(await measure(`${limited.base}${listPath}`, { ...headers, 'Accept-Encoding': 'gzip' }, limited.child));
    }
    const compression = compressionCost(await rawBody(`${limited.base}/api/v1/articles?page=1&limit=50`, headers));
    const ratio = (f: (i: number) => number) => {
      const values = runs.bareHttp.map((_, i) => f(i)).sort((a, b) => a - b);
      return values[Math.floor(values.length / 2)]!;
    };
    const { bareHttp: b, list: l, listNoLimit: n, detail: d, listFields: lf, detailHtml: dh } = runs;
    return {
      rounds: ROUNDS,
      pinned: taskset !== null,
      tool: runs.bareHttp[0]!.tool,
      ratios: {
        listRps: ratio((i) => l[i]!.rps / b[i]!.rps),
        listCpu: ratio((i) => b[i]!.cpuUsPerRequest / l[i]!.cpuUsPerRequest),
        detailRps: ratio((i) => d[i]!.rps / b[i]!.rps),
        detailCpu: ratio((i) => b[i]!.cpuUsPerRequest / d[i]!.cpuUsPerRequest),
        limiterCpu: ratio((i) => l[i]!.cpuUsPerRequest / n[i]!.cpuUsPerRequest - 1),
        limiterRps: ratio((i) => 1 - l[i]!.rps / n[i]!.rps),
        listFieldsRps: ratio((i) => lf[i]!.rps / b[i]!.rps),
        detailHtmlRps: ratio((i) => dh[i]!.rps / b[i]!.rps),
      },
      bareHttp: median(runs.bareHttp),
      list: median(runs.list),
      listNoLimit: median(runs.listNoLimit),
      detail: median(runs.detail),
      listFields: median(runs.listFields),
      detailHtml: median(runs.detailHtml),
      listGzip: median(runs.listGzip),
      compression,
    };
  } finally {
    for (const server of servers) await stop(server);
  }
}

/** A body as sent without Accept-Encoding (fetch would ask for a compressed one). */
function rawBody(url: string, headers: Record<string, string>): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () => resolve(Buffer.concat(chunks)));
    });
    req.once('error', reject);
    req.end();
  });
}
