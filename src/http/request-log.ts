import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../logger.js';
import { redactKeys } from './redact-url.js';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * One JSON line per request. Only the method, the path with its query and the partner's key
 * id are logged: never headers, so the key in X-API-Key cannot reach a log even if the
 * logger's redaction were misconfigured. The request id is echoed in X-Request-Id for support.
 */
export function requestLog(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId(req: IncomingMessage, res: ServerResponse) {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    serializers: {
      req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, url: redactKeys(req.url) }),
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

function partner(res: ServerResponse): Record<string, unknown> {
  const locals = (res as ServerResponse & { locals?: Record<string, unknown> }).locals;
  return { keyId: locals?.keyId, errorCode: locals?.errorCode };
}
