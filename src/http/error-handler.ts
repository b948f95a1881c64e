import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { AppError, InvalidParameterError, MethodNotAllowedError, NotFoundError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { SnapshotStore } from '../db/snapshot-store.js';

export function sendError(res: Response, error: AppError): void {
  res.statusCode = error.status;
  res.setHeader('Cache-Control', 'no-store');
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.json({ error: { code: error.code, message: error.message, ...error.details } });
}

/** The API is read-only: anything but GET and HEAD is refused before any other check. */
export const onlyReads: RequestHandler = (req, _res, next) => {
  if (req.method === 'GET' || req.method === 'HEAD') return next();
  next(new MethodNotAllowedError(req.method));
};

export const unknownPath: RequestHandler = (_req, _res, next) => {
  next(new NotFoundError('There is no such endpoint; see /api/v1/openapi.json for the list.'));
};

/**
 * The one place where errors become HTTP responses. AppErrors carry their own code and
 * status; store failures become 503; anything else is a bug: logged with its stack, answered
 * with a generic 500 that reveals nothing.
 */
export function errorHandler(store: SnapshotStore, logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    let known = error instanceof AppError ? error : store.failure(error);
    if (!(known instanceof AppError)) known = fromExpress(error);
    if (known instanceof AppError) {
      // pino-http logs the request line; the reason of a 503 is only in the store's own log.
      res.locals.errorCode = known.code;
      return sendError(res, known);
    }
    logger.error({ err: error, reqId: (req as { id?: unknown }).id }, 'unexpected error');
    sendError(res, new AppError('internal_error', 'Something went wrong on our side; please retry later.', 500));
  };
}

/** Errors raised by Express itself before a route ran (a malformed percent-encoded path). */
function fromExpress(error: unknown): AppError | undefined {
  if (error instanceof URIError) {
    return new InvalidParameterError('slug', 'The path is not valid percent-encoding.');
  }
  const status = (error as { status?: unknown })?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new AppError('invalid_request', 'The request could not be understood.', 400);
  }
  return undefined;
}
