import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { accepts } from './listening.js';

/*
 * A real HAProxy (Debian's package) as a child process, in the foreground, with its config in
 * a temp dir and listening on 127.0.0.1 only: for the tests of what the API does behind a load
 * balancer that health-checks it. CI's .ci/run installs it (test/support/tools/required-tool.ts).
 */

export const HAPROXY = '/usr/sbin/haproxy';

/** Why HAProxy cannot be used here (undefined when it can); the suite never installs it (.ci/run does). */
export function haproxyMissing(): string | undefined {
  return existsSync(HAPROXY) ? undefined : `${HAPROXY} not found (Debian's package haproxy)`;
}

export interface Haproxy {
  /** Stops HAProxy (SIGUSR1: a soft stop) and waits for it. */
  stop(): Promise<void>;
  /** What HAProxy wrote so far (its log goes to stderr), for a failing test's message. */
  output(): string;
}

/**
 * Starts HAProxy with `body` after its global and defaults sections (frontends and backends),
 * in the foreground (`-db`), and resolves once `port` accepts connections.
 */
export async function startHaproxy(dir: string, body: string, port: number): Promise<Haproxy> {
  const prefix = join(dir, 'haproxy');
  mkdirSync(prefix, { recursive: true });
  const conf = join(prefix, 'haproxy.cfg');
  writeFileSync(
    conf,
    `global
  maxconn 512
  log stderr format short local0 info
defaults
  mode http
  log global
  option httplog
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  timeout http-keep-alive 10s
${body}
`,
  );
  const child: ChildProcess = spawn(HAPROXY, ['-db', '-f', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (output += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited with ${child.exitCode}: ${output}`);
    if (await accepts(port)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`haproxy did not listen on ${port}: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGUSR1');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
