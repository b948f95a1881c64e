import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../logger.js';
import type { ClientAddress } from '../server/client-address.js';
import { beginContext, contextOf, type RequestContext } from './context.js';
import { redactKeys } from './redact-url.js';
import { routeOf } from '../endpoints/routes-table.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Called once per answered (or aborted) request, after its log line: e.g. metrics. */
export type ResponseHook = (req: IncomingMessage, res: ServerResponse, context: RequestContext) => void;

/**
 * One JSON line per request, written when the response is done, for the fast path and Express
 * alike (src/app.ts calls `begin` first thing): `req {id, method, url}`, `res {status}`,
 * `responseTime` (ms), and the partner's `keyId` and `errorCode` from the request context.
 * Only those fields are logged, never headers, so the key in X-API-Key cannot reach a log
 * even if the logger's redaction were misconfigured. The request id goes in the context, and
 * from there in X-Request-Id (src/http/pipeline/response-head.ts), for support.
 *
 * Written here rather than with pino-http, which gave the same line: profiled on a cached
 * page, pino-http's per-request child logger, three listeners and the logger's redaction
 * took about a tenth of the answer's CPU, half of it for redaction that had nothing to find.
 */
export function requestLog(
  parent: Logger,
  options: { onResponse?: ResponseHook; clientAddress?: ClientAddress } = {},
) {
  const { onResponse } = options;
  const clientAddress: ClientAddress = options.clientAddress ?? ((req) => req.socket.remoteAddress);
  // The line is built here field by field from values that cannot hold a secret (the URL has
  // its keys redacted below), so the logger's redaction paths and key-name scrubbing, which
  // cost more than writing the line, have nothing to find: this child skips them.
  const logger = parent.child({}, { redact: { paths: [] }, formatters: { log: (line: object) => line } });
  const write = requestLineWriter(logger);
  // One listener shared by every response (a response is its `this`, its request `req`): no
  // closure and no once-wrapper per request. 'close' is emitted once per response.
  function onClose(this: ServerResponse): void {
    const res = this;
    const req = res.req;
    const context = contextOf(res);
    logLine(logger, write, req, res, context, clientAddress);
    if (onResponse) onResponse(req, res, context);
  }
  return function begin(req: IncomingMessage, res: ServerResponse): RequestContext {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    // The route is matched here, once, for everything that reads it (src/http/endpoints/routes-table.ts).
    const context = beginContext(res, id, Date.now(), routeOf(req.url));
    // 'close' follows 'finish' for every response, and alone for one cut short.
    res.on('close', onClose);
    return context;
  };
}

function logLine(
  logger: Logger,
  write: RequestLineWriter,
  req: IncomingMessage,
  res: ServerResponse,
  context: RequestContext,
  clientAddress: ClientAddress,
): void {
  const status = res.statusCode;
  const line: RequestLine = {
    // The partner's address (TRUST_PROXY decides which X-Forwarded-For hop), for support and
    // abuse reports.
    req: { id: context.requestId, method: req.method, url: redactKeys(req.url ?? ''), client: clientAddress(req) },
    res: { status },
    responseTime: Date.now() - context.startedAt,
    keyId: context.key?.id,
    errorCode: context.errorCode,
    // A 503's cause, for the operator; the partner only got a generic message.
    reason: context.errorReason,
  };
  if (status >= 500) logger.error(line, `request failed with status ${status}`);
  else write(line, res.writableFinished ? 'request completed' : 'request aborted');
}

export interface RequestLine {
  req: { id: string; method: string | undefined; url: string; client: string | undefined };
  res: { status: number };
  responseTime: number;
  keyId: number | undefined;
  errorCode: string | undefined;
  reason: string | undefined;
}

export type RequestLineWriter = (line: RequestLine, msg: string) => void;

const json = JSON.stringify;

/**
 * Writes an info-level request line exactly as `logger.info(line, msg)` would (pino's level
 * and time, the logger's bindings, the fields in order with undefined ones left out, then
 * `msg`), straight to the logger's destination. pino's generic path (level methods, a
 * serializer lookup and a JSON.stringify per field) was the largest single cost of a cached
 * answer once the headers were written in one call; this line has a fixed shape. A test
 * compares the two outputs field by field.
 */
export function requestLineWriter(logger: Logger): RequestLineWriter {
  const internals = logger as unknown as Record<symbol, unknown>;
  const stream = internals[pino.symbols.streamSym] as { write(text: string): unknown };
  const time = internals[pino.symbols.timeSym] as () => string;
  const bindings = internals[pino.symbols.chindingsSym] as string;
  const start = `{"level":${logger.levels.values.info}`;
  return (line, msg) => {
    if (!logger.isLevelEnabled('info')) return;
    const { req, res } = line;
    let text = `${start}${time()}${bindings},"req":{"id":${json(req.id)}`;
    if (req.method !== undefined) text += `,"method":${json(req.method)}`;
    text += `,"url":${json(req.url)}`;
    if (req.client !== undefined) text += `,"client":${json(req.client)}`;
    text += `},"res":{"status":${res.status}},"responseTime":${line.responseTime}`;
    if (line.keyId !== undefined) text += `,"keyId":${line.keyId}`;
    if (line.errorCode !== undefined) text += `,"errorCode":${json(line.errorCode)}`;
    if (line.reason !== undefined) text += `,"reason":${json(line.reason)}`;
    stream.write(`${text},"msg":${json(msg)}}\n`);
  };
}
