import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { drainable } from '../../src/http/server/drain.js';
import { keepAliveClient } from '../support/keep-alive-client.js';

/*
 * The drain on a real server and real sockets, with a handler the test holds open, so that a
 * request is in flight exactly when the drain starts.
 */

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server?.listening ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

function start(keepAliveTimeoutMs: number) {
  const held: ServerResponse[] = [];
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/slow') return void held.push(res);
    res.end('ok');
  });
  server.keepAliveTimeout = keepAliveTimeoutMs;
  const drain = drainable(server);
  return new Promise<{ port: number; drain: typeof drain; held: ServerResponse[] }>((resolve) =>
    server!.listen(0, '127.0.0.1', () => resolve({ port: (server!.address() as AddressInfo).port, drain, held })),
  );
}

const refused = (port: number) =>
  new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
  });

describe('draining a server', () => {
  it('stops accepting, answers in-flight and next requests with Connection: close, and closes idle sockets without a reset', async () => {
    const { port, drain, held } = await start(300);
    const busy = await keepAliveClient(port);
    const reusing = await keepAliveClient(port);
    const idle = await keepAliveClient(port);
    for (const client of [reusing, idle]) {
      const first = await client.get('/');
      expect(first.headers.connection).toBe('keep-alive');
    }
    const inFlight = busy.get('/slow');
    await expect.poll(() => held.length, { timeout: 10_000 }).toBe(1);

    const drained = drain.drain(10_000);
    expect(drain.draining).toBe(true);
    expect(await refused(port)).toBe('ECONNREFUSED');

    // A request arriving on an open keep-alive socket during the drain is answered, then closed.
    const next = await reusing.get('/');
    expect(next.status).toBe(200);
    expect(next.headers.connection).toBe('close');
    expect(await reusing.closed).toBe('end');

    // The request in flight when the drain began is answered with Connection: close too.
    held[0]!.end('late');
    const late = await inFlight;
    expect(late.body).toBe('late');
    expect(late.headers.connection).toBe('close');
    expect(await busy.closed).toBe('end');

    // The idle socket is closed by the keep-alive timeout it was told of: a FIN, not a reset.
    expect(await idle.closed).toBe('end');
    expect(await drained).toBe('drained');
  });

  it('cuts what is left when the time is up, so the process can exit', async () => {
    const { port, drain, held } = await start(5_000);
    const stuck = await keepAliveClient(port);
    void stuck.get('/slow').catch(() => undefined);
    await expect.poll(() => held.length, { timeout: 10_000 }).toBe(1);
    expect(await drain.drain(200)).toBe('timed out');
    expect(await stuck.closed).not.toBe('pending');
    expect(stuck.socket.destroyed || stuck.socket.readableEnded).toBe(true);
  });
});
