import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { storeUnavailable } from '../../db/snapshot/snapshot-store.js';
import { AppError, InvalidParameterError, MethodNotAllowedError, NotFoundError, ServiceUnavailableError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { contextOf } from './context.js';

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
 * The one place where errors become HTTP responses, for the fast path too (it hands every
 * error over to Express). It only maps: AppErrors carry their own code, status and headers;
 * store failures become 503 (the store itself decides about its connection when it is next
 * used); anything else is a bug: logged with its stack, answered with a generic 500 that
 * reveals nothing.
 */
export function errorHandler(logger: Logger, noticeStoreFailure?: (error: unknown) => void): ErrorRequestHandler {
  return (error: unknown, _req, res, _next) => {
    // A damaged snapshot found by this request marks the store failed (src/db/snapshot/snapshot-store.ts).
    noticeStoreFailure?.(error);
    const context = contextOf(res);
    const known = error instanceof AppError ? error : (storeUnavailable(error) ?? fromExpress(error));
    if (known) {
      context.errorCode = known.code;
      // The request log line carries the operator-facing reason of a 503.
      if (known instanceof ServiceUnavailableError) context.errorReason = known.reason;
      return sendError(res, known);
    }
    context.errorCode = 'internal_error';
    logger.error({ err: error, reqId: context.requestId }, 'unexpected error');
    sendError(res, new AppError('internal_error', 'Something went wrong on our side; please retry later.'));
  };
}

/** Errors raised by Express itself before a route ran (a malformed percent-encoded path). */
function fromExpress(error: unknown): AppError | undefined {
  if (error instanceof URIError) {
    return new InvalidParameterError('slug', 'The path is not valid percent-encoding.');
  }
  const status = (error as { status?: unknown })?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new AppError('invalid_request', 'The request could not be understood.');
  }
  return undefined;
}
