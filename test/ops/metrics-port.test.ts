import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runNode, SERVER_PATH, type RunResult } from '../support/run-node.js';
import { addKey } from '../support/api.js';
import { killApis, spawnApi } from '../support/api-process.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { REPO_ROOT } from '../support/worker.js';

/*
 * A METRICS_PORT that cannot be bound, with the real entry point as a child process: the
 * process must stop with one line naming METRICS_PORT and exit code 1, before it serves any
 * partner (not keep serving without metrics nor signal handlers).
 */

const dir = tempDir('metrics-port-');
const dbPath = dir.path('snapshot.db');
let occupier: Server;
let takenPort: number;

beforeAll(async () => {
  // A usable snapshot and keys: the only thing wrong with the start is the metrics port.
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber' })],
    articles: [rawArticle({ slug: 'hello', section_slug: 'fiber', published_at: '2026-01-01T00:00:00Z' })],
    now: Date.now(),
  });
  addKey(dbPath);
  occupier = createServer((_req, res) => res.end('someone else'));
  await new Promise<void>((resolve) => occupier.listen(0, '127.0.0.1', resolve));
  takenPort = (occupier.address() as AddressInfo).port;
});

afterAll(async () => {
  await killApis();
  await new Promise<void>((resolve) => occupier.close(() => resolve()));
  dir.cleanup();
});

/** Starts the API as an operator would; a process still running after the timeout is killed. */
function runApi(env: Record<string, string>): Promise<RunResult> {
  return runNode(
    [SERVER_PATH],
    { HOST: '127.0.0.1', PORT: '0', METRICS_HOST: '127.0.0.1', LOG_LEVEL: 'info', DATABASE_PATH: dbPath, ...env },
    { cwd: REPO_ROOT, timeoutMs: 10_000 },
  );
}

/** Exit code 1, exactly one stderr line naming METRICS_PORT, no stack, and never listening. */
function expectStoppedOnMetricsPort(result: RunResult): string {
  expect(result.timedOut, `the API kept running: ${result.stderr}`).toBe(false);
  expect(result.code, result.stderr).toBe(1);
  const lines = result.stderr.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stderr).toContain('METRICS_PORT');
  expect(result.stdout).not.toContain('API listening');
  return lines[0]!;
}

/** A port free at the moment of asking (bound then released). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('a METRICS_PORT that cannot be bound', () => {
  it('stops the API with exit code 1 and one line naming METRICS_PORT when another program holds the port', async () => {
    const line = expectStoppedOnMetricsPort(await runApi({ METRICS_PORT: String(takenPort) }));
    expect(line).toContain(`127.0.0.1:${takenPort}`);
    expect(line).toContain('already in use');
  });

  it('stops the API with exit code 1 and one line naming METRICS_PORT when it is the same port as PORT', async () => {
    const port = String(await freePort());
    const line = expectStoppedOnMetricsPort(await runApi({ PORT: port, METRICS_PORT: port }));
    expect(line).toContain(port);
  });

  it('stops a cluster (WEB_CONCURRENCY=2) the same way: the primary holds METRICS_PORT for all processes', async () => {
    const line = expectStoppedOnMetricsPort(await runApi({ METRICS_PORT: String(takenPort), WEB_CONCURRENCY: '2' }));
    expect(line).toContain('already in use');
  });

  it('starts and serves both ports when METRICS_PORT is free: binding the metrics first changes nothing else', async () => {
    const port = await freePort();
    const api = await spawnApi({ DATABASE_PATH: dbPath, METRICS_PORT: String(port) });
    expect(api.metricsUrl).toBe(`http://127.0.0.1:${port}`);
    expect((await fetch(`${api.metricsUrl}/metrics`)).status).toBe(200);
    expect((await fetch(`${api.url}/health`)).status).toBe(200);
    expect(api.stderr).toBe('');
  });
});
