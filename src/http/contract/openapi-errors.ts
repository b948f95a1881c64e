import { codesFrom, codesOf, ERROR_CATALOGUE, ERROR_CODES as ALL_CODES, statusOf, type ErrorCode, type OperationId } from '../../error-catalogue.js';

/*
 * The error codes as the OpenAPI document lists them, derived from the one catalogue
 * (src/error-catalogue.ts): nothing here is written by hand.
 */

export type { ErrorCode };

/** Every code a partner can meet in an operation's answer, with its status, when and example. */
export const ERROR_CODES = Object.fromEntries(
  ALL_CODES.filter((code) => !['server', 'fault'].includes(ERROR_CATALOGUE[code].from as string)).map((code) => [
    code,
    ERROR_CATALOGUE[code],
  ]),
) as Partial<typeof ERROR_CATALOGUE>;

/**
 * Refusals by the HTTP server itself, before a request reaches an operation (src/http/server/server-limits.ts,
 * src/http/pipeline/error-handler.ts): the same body shape, no X-Request-Id (there is no request yet).
 */
export const SERVER_REFUSALS = Object.fromEntries(codesFrom('server').map((code) => [code, statusOf(code)]));

/** What every keyed operation can answer, whatever its parameters. */
export const KEYED_ERRORS: readonly ErrorCode[] = codesFrom('keyed');

/** The codes an operation can answer: the keyed ones when it needs a key, then its own. */
export function operationErrors(operation: OperationId, keyed: boolean): ErrorCode[] {
  return [...(keyed ? KEYED_ERRORS : []), ...codesOf(operation)];
}
