import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../logger.js';
import type { ClientAddress } from './client-address.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * One JSON line per request. Only the method, the path with its query, the client's address
 * and the partner's key id are logged: never headers, so the key in X-API-Key cannot reach a
 * log even if the logger's redaction were misconfigured. The request id is echoed in
 * X-Request-Id for support.
 */
export function requestLog(logger: Logger, clientAddress: ClientAddress = (req) => req.socket.remoteAddress) {
  return pinoHttp({
    logger,
    genReqId(req: IncomingMessage, res: ServerResponse) {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    serializers: {
      req: (req: IncomingMessage & { id: unknown }) => ({
        id: req.id,
        method: req.method,
        url: redactKeys(req.url ?? ''),
        // The partner's address (TRUST_PROXY decides which X-Forwarded-For hop), for support
        // and abuse reports.
        client: clientAddress(req),
      }),
      res: (res: { statusCode: number }) => ({ status: res.statusCode }),
    },
    // Added to the line itself rather than through customProps, which builds a child logger
    // per request.
    customSuccessObject: (_req, res, value: object) => ({ ...value, ...partner(res) }),
    // A 5xx is already explained by the store's or the error handler's own log line; the
    // synthetic "failed with status code" error pino-http would add carries nothing more.
    customErrorObject: (_req, res, _error, value: { res: unknown; responseTime: number }) => ({
      res: value.res,
      responseTime: value.responseTime,
      ...partner(res),
    }),
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
    customErrorMessage: (_req, res) => `request failed with status ${res.statusCode}`,
    // One child logger per request (the `req` binding) instead of two, and serializers that
    // read three fields instead of wrapping the whole request: logging is most of the cost of
    // a cached answer.
    quietReqLogger: false,
    wrapSerializers: false,
  });
}

// A partner who puts the key in the query string (or the path) by mistake is refused, and the
// key must not reach the log through the URL either.
const KEY_IN_URL = /lsk(?:_|%5f)[0-9a-z]*/gi;

function redactKeys(url: string): string {
  return url.replace(KEY_IN_URL, 'lsk_[redacted]');
}

function partner(res: ServerResponse): Record<string, unknown> {
  const locals = (res as ServerResponse & { locals?: Record<string, unknown> }).locals;
  return { keyId: locals?.keyId, errorCode: locals?.errorCode };
}
