import { execFileSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import type { LoadJob, LoadResult } from './load-worker.js';

export type { LoadResult } from './load-worker.js';

/** Runs the built-in load generator in a worker thread. */
export function load(job: Partial<LoadJob> & Pick<LoadJob, 'mode' | 'urls'>): Promise<LoadResult> {
  const full: LoadJob = { headers: {}, connections: 32, rate: 100, durationMs: 5_000, warmupMs: 1_000, ...job };
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./load-worker.js', import.meta.url), { workerData: full });
    worker.once('message', (result: LoadResult) => {
      void worker.terminate();
      resolve(result);
    });
    worker.once('error', reject);
  });
}

let wrkPath: string | null | undefined;

const commandPath = (name: string): string | null => {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
};

/**
 * wrk measures throughput with less client overhead than the built-in generator, whose own
 * cost on the other core caps the rate and flatters every ratio. When it is missing and
 * Debian's apt-get can be run (as root), the bench installs it (BENCH_INSTALL_WRK=0 to skip);
 * otherwise the built-in generator is used and the report says which tool measured.
 */
export function findWrk(): string | null {
  if (wrkPath !== undefined) return wrkPath;
  wrkPath = commandPath('wrk');
  if (wrkPath === null && process.env.BENCH_INSTALL_WRK !== '0' && process.getuid?.() === 0 && commandPath('apt-get')) {
    process.stderr.write('wrk is missing: installing it with apt-get (BENCH_INSTALL_WRK=0 skips this) ...\n');
    try {
      execFileSync('sh', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk'], {
        stdio: ['ignore', 'ignore', 'inherit'],
        timeout: 300_000,
      });
    } catch {
      process.stderr.write('could not install wrk; the built-in load generator measures instead\n');
    }
    wrkPath = commandPath('wrk');
  }
  return wrkPath;
}

let tasksetPath: string | null | undefined;

/** taskset (util-linux), to pin the benchmark's processes to cores where the machine allows. */
export function findTaskset(): string | null {
  if (tasksetPath !== undefined) return tasksetPath;
  try {
    tasksetPath = execFileSync('sh', ['-c', 'command -v taskset'], { encoding: 'utf8' }).trim() || null;
  } catch {
    tasksetPath = null;
  }
  return tasksetPath;
}

export interface ThroughputOptions {
  /** Pins wrk to these cores (taskset), away from the server measured. */
  cpus?: string;
  /** Called just before the measured run (after the warm-up); returns what to call after it. */
  measuring?: () => () => void;
}

/** Closed-loop throughput of one URL: wrk if present, else the built-in generator. */
export async function throughput(url: string, headers: Record<string, string>, seconds = 5, options: ThroughputOptions = {}): Promise<LoadResult & { tool: string }> {
  const { cpus, measuring } = options;
  const wrk = findWrk();
  if (!wrk) {
    // The built-in generator warms up inside its run: the CPU figure includes that second.
    const measured = measuring?.();
    const result = await load({ mode: 'closed', urls: [url], headers, durationMs: seconds * 1000 });
    measured?.();
    return { ...result, tool: 'built-in' };
  }
  // A short warm-up run, then the measured one.
  const args = (d: number) => ['-t1', '-c32', `-d${d}s`, '--latency', ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), url];
  const run = (d: number) =>
    cpus && findTaskset()
      ? execFileSync(findTaskset()!, ['-c', cpus, wrk, ...args(d)], { encoding: 'utf8' })
      : execFileSync(wrk, args(d), { encoding: 'utf8' });
  run(1);
  const measured = measuring?.();
  const out = run(seconds);
  measured?.();
  const number = (re: RegExp) => Number(re.exec(out)?.[1] ?? NaN);
  const ms = (re: RegExp) => {
    const m = re.exec(out);
    if (!m) return NaN;
    const value = Number(m[1]);
    return m[2] === 'us' ? value / 1000 : m[2] === 's' ? value * 1000 : value;
  };
  const rps = number(/Requests\/sec:\s+([\d.]+)/);
  const requests = number(/(\d+) requests in/);
  const errors = number(/Non-2xx or 3xx responses: (\d+)/) || 0;
  return {
    tool: 'wrk',
    requests,
    errors,
    statuses: {},
    seconds,
    rps,
    p50: ms(/50%\s+([\d.]+)(us|ms|s)/),
    p90: ms(/90%\s+([\d.]+)(us|ms|s)/),
    p99: ms(/99%\s+([\d.]+)(us|ms|s)/),
    max: ms(/Latency\s+[\d.]+\w+\s+[\d.]+\w+\s+([\d.]+)(us|ms|s)/),
    byStatus: {},
  };
}
