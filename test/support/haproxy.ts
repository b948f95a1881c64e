import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

/*
 * A real HAProxy (Debian's package) as a child process, in the foreground, with its config in
 * a temp dir and listening on 127.0.0.1 only: for the tests of what the API does behind a load
 * balancer that health-checks it. Installed by the set-up when missing (we are root in CI).
 */

export const HAPROXY = '/usr/sbin/haproxy';

/**
 * Installs Debian's haproxy when missing; returns why it cannot when it cannot. Under CI
 * (`CI=true`) a missing HAProxy is a failure, never a skip: `.ci/run` installs it.
 */
export function ensureHaproxy(): string | undefined {
  if (existsSync(HAPROXY)) return undefined;
  const why = install();
  if (why && process.env.CI === 'true') throw new Error(`CI=true and ${why}: .ci/run should have installed it`);
  return why;
}

function install(): string | undefined {
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) return 'haproxy is not installed and this user cannot install it';
  try {
    execFileSync('sh', ['-c', 'apt-get update -qq && apt-get install -y -qq --no-install-recommends haproxy'], { stdio: 'ignore', timeout: 600_000 });
  } catch {
    return 'apt-get could not install haproxy';
  }
  return existsSync(HAPROXY) ? undefined : 'apt-get ran but haproxy is still missing';
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

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
