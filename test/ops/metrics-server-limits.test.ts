import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { closeMetricsServer, METRICS_SERVER_LIMITS, serveMetrics } from '../../src/observability/registry.js';

/*
 * The metrics port is private, but whoever can reach it must not be able to hold connections
 * without bound (slowly sent headers, or simply many sockets).
 */

const source = { contentType: 'text/plain; version=0.0.4', text: async () => 'up 1\n' };
const sockets: Socket[] = [];
let close: (() => Promise<void>) | undefined;

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await close?.();
});

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
    sockets.push(socket);
  });
}

const closed = (socket: Socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));

describe('the metrics server', () => {
  it(`serves at most ${METRICS_SERVER_LIMITS.maxConnections} connections at once and closes the rest`, async () => {
    const server = await serveMetrics(source, 0, '127.0.0.1');
    close = () => closeMetricsServer(server);
    const port = (server.address() as AddressInfo).port;
    const held = [];
    for (let i = 0; i < METRICS_SERVER_LIMITS.maxConnections; i++) held.push(await open(port));
    const extra = await open(port);
    extra.on('error', () => {});
    await closed(extra);
    expect(held.every((s) => !s.destroyed)).toBe(true);
  });

  it('closes a connection that sends its headers too slowly', async () => {
    const server = await serveMetrics(source, 0, '127.0.0.1');
    close = () => closeMetricsServer(server);
    const slow = await open((server.address() as AddressInfo).port);
    slow.on('error', () => {});
    slow.write('GET /metrics HTTP/1.1\r\nHost: x\r\n');
    let answer = '';
    slow.on('data', (chunk: Buffer) => (answer += chunk));
    await closed(slow);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  }, METRICS_SERVER_LIMITS.headersTimeoutMs + 5_000);
});
