import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built entry points; `npm test` runs tsc first, so they match the sources. */
export const CLI_PATH = fileURLToPath(new URL('../../dist/src/cli/keys.js', import.meta.url));
export const SERVER_PATH = fileURLToPath(new URL('../../dist/src/server.js', import.meta.url));
export const CONNECTION_MODULE_PATH = fileURLToPath(new URL('../../dist/src/db/sqlite/connection.js', import.meta.url));

export interface RunResult {
  /** null when the process was killed (see `timedOut`). */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** When the process ended (epoch ms). */
  endedAt: number;
}

export interface RunOptions {
  timeoutMs?: number;
  cwd?: string;
  /**
   * Closes the reading end of the child's stdout, as `| head` does: `at-start` before the
   * child can print anything, `after-first-line` once a first line has arrived (`stdout` then
   * holds what was read up to then).
   */
  closeStdout?: 'at-start' | 'after-first-line';
  /** An open file descriptor to give the child as its stdout instead of a pipe. */
  stdoutFd?: number;
}

/**
 * Runs `node <args>` as a real child process with exactly the given environment (plus PATH),
 * and kills it after `timeoutMs` so a hanging program fails its test instead of the suite.
 */
export function runNode(
  args: string[],
  env: Record<string, string>,
  options: RunOptions = {},
): Promise<RunResult> {
  const script = args.find((a) => a.endsWith('.js'));
  if (script && !existsSync(script)) {
    throw new Error(`${script} is missing: build first with npx tsc -p tsconfig.json`);
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      env: { PATH: process.env.PATH ?? '', ...env },
      cwd: options.cwd,
      stdio: ['ignore', options.stdoutFd ?? 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (options.closeStdout === 'after-first-line' && stdout.includes('\n')) child.stdout?.destroy();
    });
    if (options.closeStdout === 'at-start') child.stdout?.destroy();
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 15_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut, endedAt: Date.now() });
    });
  });
}

/**
 * Runs the keys CLI against the keys database at `keysDatabasePath`, with the snapshot
 * (DATABASE_PATH) at `snapshot.db` beside it unless `extraEnv` says otherwise.
 */
export function runCli(
  args: string[],
  keysDatabasePath: string,
  extraEnv: Record<string, string> = {},
  options: Omit<RunOptions, 'cwd'> = {},
): Promise<RunResult> {
  const env = { KEYS_DATABASE_PATH: keysDatabasePath, DATABASE_PATH: join(dirname(keysDatabasePath), 'snapshot.db'), ...extraEnv };
  return runNode([CLI_PATH, ...args], env, options);
}

/** The lines of a process's output, without the final newline. */
export function lines(output: string): string[] {
  return output.replace(/\n$/, '').split('\n');
}
