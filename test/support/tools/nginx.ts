import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { accepts } from './listening.js';

/*
 * A real nginx (Debian's package) as a child process, with its own prefix, config and cache
 * in a temp dir and listening on 127.0.0.1 only: for the tests of what the API does behind a
 * reverse proxy and shared cache. Never installed from here: `.ci/run` installs it.
 */

export const NGINX = '/usr/sbin/nginx';

/** Why nginx cannot be used here, or undefined when it can (never installed from here). */
export function nginxMissing(): string | undefined {
  return existsSync(NGINX) ? undefined : `${NGINX} not found (Debian's nginx package)`;
}

/** A free port on 127.0.0.1 (nginx cannot listen on port 0 and say which it got). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface Nginx {
  /** Stops nginx (SIGQUIT: a graceful stop) and waits for it. */
  stop(): Promise<void>;
  /** nginx's error log so far, for a failing test's message. */
  errors(): string;
}

/**
 * Starts nginx with `http` as the body of its http block (server blocks), in the foreground
 * (`daemon off`), and resolves once every port in `ports` accepts connections.
 */
export async function startNginx(dir: string, http: string, ports: number[]): Promise<Nginx> {
  const prefix = join(dir, 'nginx');
  mkdirSync(join(prefix, 'logs'), { recursive: true });
  const conf = join(prefix, 'nginx.conf');
  // Run as root, the workers would switch to `nobody`, who cannot enter the test's temp dir.
  const user = process.getuid?.() === 0 ? 'user root;' : '';
  writeFileSync(
    conf,
    `${user}
worker_processes 1;
pid ${join(prefix, 'nginx.pid')};
error_log ${join(prefix, 'logs', 'error.log')} info;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${join(prefix, 'body')};
  proxy_temp_path ${join(prefix, 'proxy')};
  fastcgi_temp_path ${join(prefix, 'fastcgi')};
  uwsgi_temp_path ${join(prefix, 'uwsgi')};
  scgi_temp_path ${join(prefix, 'scgi')};
${http}
}
`,
  );
  const child: ChildProcess = spawn(NGINX, ['-p', prefix, '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const errors = () => {
    try {
      return stderr + execFileSync('cat', [join(prefix, 'logs', 'error.log')], { encoding: 'utf8' });
    } catch {
      return stderr;
    }
  };
  const deadline = Date.now() + 30_000;
  for (const port of ports) {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${errors()}`);
      if (await accepts(port)) break;
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`nginx did not listen on ${port}: ${errors()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    errors,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGQUIT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
