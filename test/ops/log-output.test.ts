import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { SERVER_PATH } from '../support/run-node.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';

/*
 * The API's log lines go to stdout. A log reader that stops reading (a full pipe) must not
 * stop the API: writes wait on a thread, never on the event loop, and no line is lost once
 * the reader reads again.
 */

const dir = tempDir('log-output-');
const started: ChildProcess[] = [];
afterAll(() => {
  // Also when the test timed out (an API stuck on its stdout never answers).
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
  dir.cleanup();
});

const REQUESTS = 1_500;

function get(port: number, agent: Agent, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    })
      .on('error', reject)
      .end();
  });
}

describe('the API log output', () => {
  it('keeps answering while nobody reads its stdout, and loses no line', async () => {
    const databasePath = dir.path('snapshot.db');
    buildSnapshot(databasePath, { sections: [], articles: [] });
    const child = spawn(process.execPath, [SERVER_PATH], {
      env: { PATH: process.env.PATH ?? '', DATABASE_PATH: databasePath, KEYS_DATABASE_PATH: dir.path('keys.db'), LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.push(child);
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      let output = '';
      const port = await new Promise<number>((resolve, reject) => {
        const onData = (chunk: Buffer) => {
          output += chunk;
          const listening = /"port":(\d+)[^\n]*"msg":"API listening/.exec(output);
          if (!listening) return;
          // From here on nobody reads: the pipe and the stream's buffer fill up.
          child.stdout!.off('data', onData);
          child.stdout!.pause();
          resolve(Number(listening[1]));
        };
        child.stdout!.on('data', onData);
        child.on('exit', (code) => reject(new Error(`the API exited with ${code}`)));
      });
      // About 300 bytes of log per request: several times what a pipe and a stream buffer hold.
      const agent = new Agent({ keepAlive: true, maxSockets: 8 });
      const statuses = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => get(port, agent, `/no-such-path-${i}`)));
      agent.destroy();
      expect(statuses.every((s) => s === 404)).toBe(true);

      // Reading again, then stopping: every request's line comes out.
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
      child.stdout!.resume();
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      // A clean stop: nothing on stderr (no error thrown while the output was being ended).
      expect(stderr).toBe('');
      const requestLines = output.split('\n').filter((l) => l.includes('"url":"/no-such-path-'));
      expect(requestLines).toHaveLength(REQUESTS);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 30_000);
});
