import { connect, type Socket } from 'node:net';

/*
 * A keep-alive HTTP/1.1 client on one raw socket, so a test sees exactly how the server ends
 * the connection: a clean close (FIN, 'end') or a reset (ECONNRESET), which Node's agents and
 * fetch would hide behind retries.
 */

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface KeepAliveClient {
  socket: Socket;
  /** Sends one GET and resolves with its response; rejects if the connection fails first. */
  get(path: string, headers?: Record<string, string>): Promise<RawResponse>;
  /** Resolves 'end' when the server closed cleanly, 'error: <code>' when the socket failed. */
  readonly closed: Promise<string>;
}

export function keepAliveClient(port: number): Promise<KeepAliveClient> {
  return new Promise((resolveClient, rejectClient) => {
    const socket = connect(port, '127.0.0.1');
    let buffer = Buffer.alloc(0);
    let pending: { resolve: (r: RawResponse) => void; reject: (e: Error) => void } | undefined;
    let ended = false;
    const closed = new Promise<string>((resolve) => {
      socket.once('error', (error: NodeJS.ErrnoException) => {
        pending?.reject(error);
        resolve(`error: ${error.code ?? error.message}`);
      });
      socket.once('end', () => {
        ended = true;
        pending?.reject(new Error('the server closed the connection before answering'));
        resolve('end');
      });
    });
    const tryParse = () => {
      const headerEnd = buffer.indexOf('\r\n\r\n');
      if (headerEnd === -1 || !pending) return;
      const [statusLine, ...lines] = buffer.subarray(0, headerEnd).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (buffer.length < headerEnd + 4 + length) return;
      const body = buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString('utf8');
      buffer = buffer.subarray(headerEnd + 4 + length);
      const done = pending;
      pending = undefined;
      done.resolve({ status: Number(statusLine!.split(' ')[1]), headers, body });
    };
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      tryParse();
    });
    socket.once('connect', () => {
      socket.off('error', rejectClient);
      resolveClient({
        socket,
        closed,
        get(path, headers = {}) {
          if (ended) return Promise.reject(new Error('connection already closed'));
          return new Promise<RawResponse>((resolve, reject) => {
            pending = { resolve, reject };
            const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
            socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`);
          });
        },
      });
    });
    socket.once('error', rejectClient);
  });
}
