import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';

/*
 * One GET over node:http (node:https for an https CMS), not fetch: fetch's engine (undici and
 * its WebAssembly HTTP parser) cost the worker about 12 MB of memory from the first request
 * on, most of an incremental sync's growth then (decision 0075). node:http parses with the
 * parser built into Node. What fetch did for us and the CMS client relies on is done here: the
 * keep-alive pool (Node's global agents keep connections alive), a compressed body decoded,
 * and the request and its body ended when `signal` aborts.
 */

export interface HttpAnswer {
  status: number;
  statusText: string;
  header(name: string): string | undefined;
  /** The body, decoded (gzip, deflate, br), as Buffers. */
  body: AsyncIterable<Buffer>;
  /** Stops reading the body; the connection is closed, not reused. */
  discard(): void;
}

// What fetch asked for: an answer compressed the way a CMS usually does is still read.
const ACCEPT_ENCODING = 'gzip, deflate, br';

let https: typeof import('node:https') | undefined;

export async function httpGet(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<HttpAnswer> {
  signal.throwIfAborted();
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError(`unsupported protocol ${url.protocol}`);
  // TLS is loaded only for a CMS that needs it.
  const send = url.protocol === 'https:' ? (https ??= await import('node:https')).request : httpRequest;
  const outgoing: OutgoingHttpHeaders = { ...headers, 'accept-encoding': ACCEPT_ENCODING };
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = send(url, { method: 'GET', headers: outgoing, signal }, resolve);
    req.once('error', reject);
    req.end();
  });
  // Read through the body below: an error between two reads (none is listening then) must not
  // crash the process; the reader still gets it.
  res.on('error', () => undefined);
  const body = decoded(res);
  // An abort after the headers ends the body too: its reader then fails with the abort.
  const onAbort = () => body.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  signal.addEventListener('abort', onAbort, { once: true });
  body.once('close', () => signal.removeEventListener('abort', onAbort));
  return {
    status: res.statusCode ?? 0,
    statusText: res.statusMessage ?? '',
    header: (name) => {
      const value = res.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : value;
    },
    body,
    discard: () => {
      res.destroy();
      if (body !== res) body.destroy();
    },
  };
}

/** The body as sent, or through the decoder its Content-Encoding names; errors of either reach the reader. */
function decoded(res: IncomingMessage): Readable {
  const encoding = res.headers['content-encoding']?.trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  if (!decoder) return res;
  res.once('error', (error) => decoder.destroy(error));
  // A connection closed before the end: the decoder must not wait for more.
  res.once('aborted', () => decoder.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })));
  res.pipe(decoder);
  return decoder;
}
