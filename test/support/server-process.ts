import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { SERVER_PATH } from './run-node.js';

export interface ServerProcess {
  url: string;
  /** SIGTERM, then resolves with the exit code once the process is gone. */
  stop(): Promise<number | null>;
}

/**
 * Starts the real API (`node dist/src/server.js`) on 127.0.0.1 and an ephemeral port with
 * exactly `env` (plus PATH), and resolves once it logs that it listens.
 */
export function startServerProcess(env: Record<string, string>, timeoutMs = 15_000): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, [SERVER_PATH], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exited;
  };
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the API did not start: ${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the API exited with ${code}: ${stderr}`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (entry.msg?.startsWith('API listening') && entry.port) {
          clearTimeout(timer);
          resolve({ url: `http://127.0.0.1:${entry.port}`, stop });
        }
      } catch {
        // Not a log line.
      }
    });
  });
}
