import { Agent, request } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

/*
 * The built-in load generator, run in a worker thread so it does not share the benchmark's
 * event loop. `closed`: N connections each sending the next request when the previous answer
 * arrives (throughput). `rate`: requests sent on a fixed schedule whatever the answers
 * (latency at a given load; latency counts from the scheduled time, so a stall is not hidden).
 */

export interface LoadJob {
  mode: 'closed' | 'rate';
  urls: string[];
  headers: Record<string, string>;
  /** When given, requests take these header sets in turn (several partners' keys). */
  headerSets?: Record<string, string>[];
  connections: number;
  rate: number;
  /** Closed mode: stop once this many requests were sent (each URL once, for example). */
  stopAfter?: number;
  durationMs: number;
  warmupMs: number;
}

export interface LoadResult {
  requests: number;
  errors: number;
  statuses: Record<string, number>;
  seconds: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Latency by status: were the answers fast, were the refusals fast? */
  byStatus: Record<string, { p99: number; max: number }>;
}

const job = workerData as LoadJob;
const agent = new Agent({ keepAlive: true, maxSockets: Math.max(job.connections, 64) });
let next = 0;
const nextUrl = () => job.urls[next++ % job.urls.length]!;
let nextHeaders = 0;
const headersFor = () => (job.headerSets ? job.headerSets[nextHeaders++ % job.headerSets.length]! : job.headers);

function once(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { agent, headers: headersFor() }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function run(): Promise<LoadResult> {
  const latencies: number[] = [];
  const perStatus = new Map<number, number[]>();
  const statuses: Record<string, number> = {};
  let errors = 0;
  const record = (status: number, ms: number, measuring: boolean) => {
    if (!measuring) return;
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status < 200 || status >= 400) errors += 1;
    latencies.push(ms);
    const list = perStatus.get(status) ?? [];
    list.push(ms);
    perStatus.set(status, list);
  };
  const start = performance.now();
  const measureFrom = start + job.warmupMs;
  const end = measureFrom + job.durationMs;

  if (job.mode === 'closed') {
    await Promise.all(
      Array.from({ length: job.connections }, async () => {
        while (performance.now() < end && (job.stopAfter === undefined || next < job.stopAfter)) {
          const t0 = performance.now();
          const status = await once(nextUrl());
          const t1 = performance.now();
          record(status, t1 - t0, t0 >= measureFrom && t1 <= end);
        }
      }),
    );
  } else {
    const interval = 1000 / job.rate;
    const inflight: Promise<void>[] = [];
    for (let i = 0; ; i++) {
      const scheduled = start + i * interval;
      if (scheduled >= end) break;
      const wait = scheduled - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      inflight.push(
        once(nextUrl()).then((status) => record(status, performance.now() - scheduled, scheduled >= measureFrom)),
      );
    }
    await Promise.all(inflight);
  }
  latencies.sort((a, b) => a - b);
  const byStatus: LoadResult['byStatus'] = {};
  for (const [status, list] of perStatus) {
    list.sort((a, b) => a - b);
    byStatus[status] = { p99: percentile(list, 99), max: list.at(-1) ?? 0 };
  }
  const seconds = job.durationMs / 1000;
  return {
    requests: latencies.length,
    errors,
    statuses,
    seconds,
    rps: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? 0,
    byStatus,
  };
}

if (parentPort) {
  void run().then((result) => {
    agent.destroy();
    parentPort!.postMessage(result);
  });
}
