import { createServer, STATUS_CODES, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ServerLimits } from '../../config/api.js';
import type { ErrorCode, ErrorStatus } from '../../error-catalogue.js';
import type { Logger } from '../../logger.js';
import { releaseOf } from './waiting-responses.js';

/**
 * The API's node:http server with its limits, and JSON for the errors Node's own HTTP layer
 * answers before any request reaches the app. src/server.ts and the test servers build their
 * server here, so what is tested is what runs.
 */

/**
 * The app, and (src/app.ts) what it registers on the server that carries it: listeners that
 * must run before this module's own (they are prepended).
 */
export type ApiListener = RequestListener & { attach?: (server: Server) => void };

/** Builds the server, with the limits and the JSON error answers set; it does not listen. */
export function createApiServer(app: ApiListener, limits: ServerLimits, logger: Logger): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks the two timeouts above only this often (30 s by default): a slow-header
      // client would otherwise hold its socket up to 30 s past headersTimeout.
      connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
      // Node answers a missing Host with an empty 400; we answer it in JSON below.
      requireHostHeader: false,
    },
    (req, res) => {
      room.requested(req.socket);
      if (req.httpVersion === '1.1' && req.headers.host === undefined) {
        return sendJsonError(res, 400, 'invalid_request', 'The request has no Host header, which HTTP/1.1 requires.');
      }
      app(req, res);
    },
  );
  // Not server.maxConnections: Node drops every connection past it, so a few hundred idle or
  // silent sockets lock every new client out. The room makes space instead (see ConnectionRoom).
  const room = new ConnectionRoom(limits.maxConnections, () => server.emit(SOCKET_CLOSING));
  server.on('connection', (socket: Socket) => room.admit(socket));
  // A client that stops reading a response holds its socket; drop it after this much silence.
  server.setTimeout(limits.requestTimeoutMs);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    answerClientError(error, socket, logger);
  });
  // Without these listeners Node answers an unknown Expect with an empty 417 and drops CONNECT.
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    sendJsonError(res, 417, 'expectation_failed', 'The Expect header is not supported; send the request without it.');
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    writeRaw(socket, 405, 'method_not_allowed', 'Method CONNECT is not supported: this API is read-only, use GET or HEAD.', {
      Allow: 'GET, HEAD',
    });
  });
  app.attach?.(server);
  return server;
}

interface SocketUse {
  /** Requests read on it so far. */
  requests: number;
  /** When it connected or last sent a request, in the room's own order (a counter, no clock). */
  lastSeen: number;
}

/**
 * HTTP_MAX_CONNECTIONS open connections at most, without locking new clients out: at the cap,
 * a new connection takes the place of one that is doing nothing. First an idle keep-alive
 * connection (answered, no request under way), the one idle longest; a client reopens one
 * when it needs it, as HTTP allows a server to close it at any time. Then a connection that
 * is waiting for the change feed (`wait`): it is answered at once, with the page as it is and
 * Connection: close. Then a connection that
 * has not sent a whole request yet (silent, or a slow-header client), the oldest: under
 * pressure it is cut at once instead of at HTTP_HEADERS_TIMEOUT_MS. A connection with a
 * request under way is never closed for another; when all of them are, the new one is
 * refused, as Node's maxConnections would. Per-client limits are a proxy's job (README).
 */
export class ConnectionRoom {
  private readonly sockets = new Map<Socket, SocketUse>();
  private counter = 0;
  /** Connections closed to make room, for tests and metrics. */
  evicted = 0;
  refused = 0;

  constructor(
    private readonly cap: number,
    /** Ends the answers the fast path holds: a socket is closed only after them. */
    private readonly flush: () => void,
  ) {}

  get size(): number {
    return this.sockets.size;
  }

  admit(socket: Socket): void {
    if (this.sockets.size >= this.cap) {
      const victim = this.idlest();
      if (!victim) {
        this.refused += 1;
        socket.destroy();
        return;
      }
      this.flush();
      this.sockets.delete(victim);
      const release = releaseOf(httpMessageOf(victim));
      // A waiting request (the change feed's `wait`) is answered now, with Connection: close:
      // its socket closes once the answer is written.
      if (release) release();
      else victim.destroy();
      this.evicted += 1;
    }
    this.sockets.set(socket, { requests: 0, lastSeen: ++this.counter });
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** A request was read on the socket: one map lookup, no clock. */
  requested(socket: Socket): void {
    const use = this.sockets.get(socket);
    if (!use) return;
    use.requests += 1;
    use.lastSeen = ++this.counter;
  }

  /** The connection to close for a new one, or undefined when every one is busy. */
  private idlest(): Socket | undefined {
    let idle: Socket | undefined;
    let idleSeen = Infinity;
    let silent: Socket | undefined;
    let silentSeen = Infinity;
    let waiting: Socket | undefined;
    for (const [socket, use] of this.sockets) {
      const message = httpMessageOf(socket);
      // A request waiting for the change feed can be answered at once: after the idle ones.
      if (message && releaseOf(message)) {
        waiting ??= socket;
        continue;
      }
      // Node's response under way on this socket (held by the fast path too, until it ends).
      if (message) continue;
      if (use.requests > 0) {
        if (use.lastSeen < idleSeen) [idle, idleSeen] = [socket, use.lastSeen];
      } else if (use.lastSeen < silentSeen) {
        [silent, silentSeen] = [socket, use.lastSeen];
      }
    }
    return idle ?? waiting ?? silent;
  }
}

const httpMessageOf = (socket: Socket): unknown => (socket as Socket & { _httpMessage?: unknown })._httpMessage;

/** A code with its catalogue status (src/error-catalogue.ts). */
type ParserVerdict = { [C in ErrorCode]: { status: ErrorStatus<C>; code: C; message: string } }[ErrorCode];

/**
 * Emitted on the server just before it closes a connection of its own accord (to make room):
 * whoever holds answers for that socket (the fast path, src/http/fast/fast-path.ts) sends them first.
 */
export const SOCKET_CLOSING = 'syndication:socket-closing';

/**
 * What a request Node's parser refused gets. 431 and 408 are outside the contract's status
 * list, but they are the statuses HTTP defines for these cases, which clients and proxies
 * understand; everything else the parser refuses is a malformed request: 400.
 */
export function parserVerdict(code: string | undefined): ParserVerdict {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'headers_too_large', message: 'The request headers are too large; send fewer or shorter headers.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: 'request_timeout', message: 'The request took too long to arrive; send it again, whole.' };
    case 'HPE_INVALID_METHOD':
      return { status: 400, code: 'invalid_request', message: 'The request method is not valid HTTP; this API answers GET and HEAD.' };
    default:
      return { status: 400, code: 'invalid_request', message: 'The request is not valid HTTP/1.1 and could not be read.' };
  }
}

function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, logger: Logger): void {
  // A reset or a socket already gone has nobody to answer. The raw packet (error.rawPacket) is
  // never logged: it can hold the partner's key.
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  // A response already under way on this socket cannot be followed by another head.
  const current = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (current?.headersSent) {
    socket.destroy();
    return;
  }
  const verdict = parserVerdict(error.code);
  logger.info({ parserError: error.code, status: verdict.status }, `refused a request Node could not parse (${verdict.status})`);
  writeRaw(socket, verdict.status, verdict.code, verdict.message, {}, isHead(error));
}

// A response to HEAD has no body, or the client reads the body as the next response. The
// request line is all that is read from the raw packet.
function isHead(error: NodeJS.ErrnoException): boolean {
  const raw = (error as { rawPacket?: unknown }).rawPacket;
  return Buffer.isBuffer(raw) && raw.subarray(0, 5).toString('latin1') === 'HEAD ';
}

function errorBody(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

// The socket is past HTTP parsing here: the response is written by hand, then the connection closed.
function writeRaw<C extends ErrorCode>(socket: Duplex, status: ErrorStatus<C>, code: C, message: string, extra: Record<string, string> = {}, headOnly = false): void {
  const body = errorBody(code, message);
  const headers = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    Connection: 'close',
    ...extra,
  };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n${head}\r\n${headOnly ? '' : body}`);
}

function sendJsonError<C extends ErrorCode>(res: ServerResponse, status: ErrorStatus<C>, code: C, message: string): void {
  const body = errorBody(code, message);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    Connection: 'close',
  });
  res.end(body);
}
