import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { projectRoot } from '../../src/lib/paths.js';

export const dist = (path: string) => join(projectRoot(), 'dist', path);

/**
 * The Node flags the Procfile starts `script` with (`--max-semi-space-size=16` for the API,
 * `--max-semi-space-size=4 --heap-growing-percent=15` for the worker), so that the bench
 * measures the processes as production runs them.
 */
export function procfileFlags(script: string): string[] {
  for (const line of readFileSync(join(projectRoot(), 'Procfile'), 'utf8').split('\n')) {
    const words = line.slice(line.indexOf(':') + 1).trim().split(/\s+/);
    const at = words.indexOf(`dist/${script}`);
    if (words[0] === 'node' && at > 0) return words.slice(1, at);
  }
  return [];
}

/**
 * Starts a built script as a child process with a clean environment; `pin` is a taskset
 * command prefix (`['taskset', '-c', '0']`) to keep it on given cores.
 */
export function startNode(script: string, args: string[], env: Record<string, string>, stdout: 'pipe' | 'ignore' = 'ignore', pin: string[] = []): ChildProcess {
  const [command, ...prefix] = pin.length > 0 ? [...pin, process.execPath] : [process.execPath];
  return spawn(command!, [...prefix, ...procfileFlags(script), dist(script), ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', stdout, 'pipe'],
  });
}

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await exited(child);
}

/** The first stdout line of a child that parses as JSON with a `port`. */
export function portFromStdout(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      try {
        const port = (JSON.parse(line) as { port?: number }).port;
        if (port) resolve(port);
      } catch {
        // not JSON
      }
    });
    child.once('exit', (code) => reject(new Error(`process exited (${code}) before listening`)));
  });
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Resident memory of a process, in MB: current and peak (VmHWM). */
export function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

/** CPU time a process has used so far (user + system), in milliseconds. */
export function cpuMsOf(pid: number): number {
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticksPerSecond = 100; // USER_HZ on Linux
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}

/** Polls a child's peak memory until it exits; returns the last reading. */
export function watchPeakMemory(child: ChildProcess): () => number {
  let peak = 0;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, memoryOf(child.pid!).peakMb);
    } catch {
      // the process is gone
    }
  }, 50);
  child.once('exit', () => clearInterval(timer));
  return () => {
    clearInterval(timer);
    return peak;
  };
}

export async function waitForHttp(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
