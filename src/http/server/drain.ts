import { Server as NetServer, type Socket } from 'node:net';
import type { Server, ServerResponse } from 'node:http';

/*
 * Stopping without resetting anyone. `server.close()` (Node >= 19) also closes idle
 * keep-alive sockets at once, which races with a client sending its next request on one:
 * the client gets ECONNRESET. So on a drain the server:
 * - stops accepting connections;
 * - answers every request still to be answered, in flight or arriving on an open keep-alive
 *   socket, with `Connection: close`, and Node closes that socket after the response;
 * - leaves idle sockets to the keep-alive timeout the client was told (`Keep-Alive:
 *   timeout=N`), which clients expect and retire themselves before it runs out;
 * - after `timeoutMs`, cuts what is left, so the process exits in bounded time.
 */

export type DrainResult = 'drained' | 'timed out';

export interface Drainable {
  readonly draining: boolean;
  /** Resolves when every connection has closed, or when the time is up and the rest was cut. */
  drain(timeoutMs: number): Promise<DrainResult>;
}

// Node's ServerResponse assigns itself to its socket while it is the one being answered.
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null };

export function drainable(server: Server): Drainable {
  let draining = false;
  const sockets = new Set<HttpSocket>();
  server.on('connection', (socket: HttpSocket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // Before the app's own listener, which may answer synchronously (the cached fast path).
  server.prependListener('request', (_req, res: ServerResponse) => {
    if (draining) res.setHeader('Connection', 'close');
  });

  return {
    get draining() {
      return draining;
    },
    drain(timeoutMs) {
      draining = true;
      for (const socket of sockets) {
        const res = socket._httpMessage;
        if (res && !res.headersSent) res.setHeader('Connection', 'close');
      }
      return new Promise<DrainResult>((resolve) => {
        const timer = setTimeout(() => {
          for (const socket of sockets) socket.destroy();
          resolve('timed out');
        }, timeoutMs);
        timer.unref();
        // net.Server's close: stop listening and wait for the connections, without the
        // http.Server override that closes idle keep-alive sockets under a client's feet.
        NetServer.prototype.close.call(server, () => {
          clearTimeout(timer);
          resolve('drained');
        });
      });
    },
  };
}
