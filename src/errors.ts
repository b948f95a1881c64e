import { statusOf, type ErrorCode } from './error-catalogue.js';

/**
 * Errors carry a machine-readable code and an HTTP status, but no HTTP objects: they can be
 * thrown from any layer, and one error handler (src/http/pipeline/error-handler.ts) maps them to
 * responses. The code is one of the catalogue's (src/error-catalogue.ts), which gives its
 * status. `message` is written for the partner's or operator's eyes: never a stack, SQL or a
 * path.
 */
export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, string> = {},
    /** Response headers that belong to this error (Allow, Retry-After, RateLimit...). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
    this.status = statusOf(code);
  }
}

export class InvalidParameterError extends AppError {
  constructor(param: string, message: string) {
    super('invalid_parameter', message, { param });
  }
}

export class NotFoundError extends AppError {
  constructor(message: string) {
    super('not_found', message);
  }
}

/** A locale outside the key's scope: the message names the locales it may use. */
export class LocaleNotAllowedError extends AppError {
  constructor(locale: string, allowed: readonly string[]) {
    super('locale_not_allowed', `This API key may not read locale ${locale}; it may use: ${allowed.join(', ')}.`, { param: 'locale' });
  }
}

export class MethodNotAllowedError extends AppError {
  constructor(method: string) {
    super('method_not_allowed', `Method ${method} is not supported: this API is read-only, use GET or HEAD.`, {}, {
      Allow: 'GET, HEAD',
    });
  }
}

export type ApiKeyErrorCode = Extract<ErrorCode, 'missing_api_key' | 'invalid_api_key' | 'revoked_api_key' | 'expired_api_key'>;

/**
 * The challenge every 401 carries (RFC 9110, section 11.6.1: a 401 must send one). No registered
 * scheme covers a key in a header of its own: `ApiKey`, the name of the OpenAPI document's
 * security scheme, with the header to send it in (docs/decisions/0058-openapi-against-spectral.md).
 */
export const API_KEY_CHALLENGE = 'ApiKey header="X-API-Key"';

export class ApiKeyError extends AppError {
  constructor(code: ApiKeyErrorCode, message: string) {
    super(code, message, {}, { 'WWW-Authenticate': API_KEY_CHALLENGE });
  }
}

/** Seconds a partner should wait before retrying a 503, unless the error says otherwise. */
export const DEFAULT_RETRY_AFTER_SECONDS = 30;

/**
 * Search is at capacity, or this key holds its share of it: a fast refusal instead of a queue
 * of seconds. `retryAfterSeconds` goes out as Retry-After.
 */
export class SearchBusyError extends AppError {
  constructor(message: string, retryAfterSeconds: number) {
    super('search_busy', message, {}, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}

/** This key passed its request rate. `headers` carries Retry-After and the RateLimit fields. */
export class RateLimitedError extends AppError {
  constructor(message: string, headers: Record<string, string>) {
    super('rate_limited', message, {}, headers);
  }
}

/** The article was taken down while its delete is retained in the change feed. */
export class ArticleRemovedError extends AppError {
  constructor(message: string) {
    super('article_removed', message);
  }
}

/** The change feed's `since` is malformed or older than the retained history. */
export class InvalidCursorError extends AppError {
  constructor(message: string) {
    super('invalid_cursor', message, { param: 'since' });
  }
}

/**
 * One of the service's own stores cannot answer. `reason` is for the operator's log only;
 * the partner sees a generic message.
 */
export class ServiceUnavailableError extends AppError {
  constructor(
    message: string,
    readonly reason: string = message,
    options?: { cause?: unknown },
  ) {
    super('service_unavailable', message, {}, { 'Retry-After': String(DEFAULT_RETRY_AFTER_SECONDS) });
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** A configuration value is missing or malformed; the message names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** An operator or editor error in a command: printed as one line, exit code 1. */
export class UsageError extends Error {
  override name = 'UsageError';
}
