import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { SERVER_PATH } from './run-node.js';
import { parsedLogs, REPO_ROOT, waitFor } from './worker.js';

/*
 * The API's real entry point (dist/src/server.js) as a child process, on 127.0.0.1 and
 * ephemeral ports, for the tests of what only a real process shows: metrics ports, signals,
 * cluster workers.
 */

export interface ApiProcess {
  child: ChildProcess;
  url: string;
  /** The metrics endpoint's base url, when METRICS_PORT was set. */
  metricsUrl: string | undefined;
  readonly stdout: string;
  readonly stderr: string;
  /** Every JSON log line so far. */
  logs(): Array<Record<string, unknown>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();

export async function spawnApi(env: Record<string, string>, options: { processes?: number; startTimeoutMs?: number } = {}): Promise<ApiProcess> {
  if (!existsSync(SERVER_PATH)) throw new Error(`${SERVER_PATH} is missing: build first with npx tsc -p tsconfig.json`);
  const child = spawn(process.execPath, [SERVER_PATH], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
  });
  const logs = () => parsedLogs(stdout.split('\n'));
  const processes = options.processes ?? 1;
  const listening = await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`the API exited with code ${child.exitCode}: ${stderr}`);
      const lines = logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('API listening'));
      return lines.length >= processes && lines;
    },
    // Generous: a deadline, not a delay; a cluster's processes start slowly on a loaded CI machine.
    { timeoutMs: options.startTimeoutMs ?? 60_000, what: `${processes} API process(es) listening` },
  );
  const port = listening[0]!.port as number;
  const metricsPort = (processes > 1 ? logs().find((l) => l.name === 'api-primary')?.metricsPort : listening[0]!.metricsPort) as
    | number
    | undefined;
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    metricsUrl: metricsPort === undefined ? undefined : `http://127.0.0.1:${metricsPort}`,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    logs,
    exited,
  };
}

/** Kills what spawnApi started and is still running (for afterEach). */
export async function killApis(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('close', () => resolve());
          // A cluster primary's children follow it: they lose their IPC channel and exit.
          child.kill('SIGKILL');
        }),
    ),
  );
}
