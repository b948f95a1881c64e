import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.js';
import type { ClientAddress } from './client-address.js';
import { beginContext, type RequestContext } from './context.js';
import { redactKeys } from './redact-url.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Called once per answered (or aborted) request, after its log line: e.g. metrics. */
export type ResponseHook = (req: IncomingMessage, res: ServerResponse, context: RequestContext) => void;

/**
 * One JSON line per request, written when the response is done, for the fast path and Express
 * alike (src/app.ts calls `begin` first thing): `req {id, method, url}`, `res {status}`,
 * `responseTime` (ms), and the partner's `keyId` and `errorCode` from the request context.
 * Only those fields are logged, never headers, so the key in X-API-Key cannot reach a log
 * even if the logger's redaction were misconfigured. The request id goes in the context, and
 * from there in X-Request-Id (src/http/response-head.ts), for support.
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
  return function begin(req: IncomingMessage, res: ServerResponse): RequestContext {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const context = beginContext(res, id, Date.now());
    // 'close' follows 'finish' for every response, and alone for one cut short.
    res.once('close', () => {
      logLine(logger, req, res, context, clientAddress);
      if (onResponse) {
        // Express's route pattern, for a request it answered; the fast path set the same one.
        context.route ??= (req as { route?: { path?: unknown } }).route?.path as string | undefined;
        onResponse(req, res, context);
      }
    });
    return context;
  };
}

function logLine(
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  context: RequestContext,
  clientAddress: ClientAddress,
): void {
  const status = res.statusCode;
  const line = {
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
  else logger.info(line, res.writableFinished ? 'request completed' : 'request aborted');
}
