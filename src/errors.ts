/**
 * Errors carry a machine-readable code and an HTTP status, but no HTTP objects: they can be
 * thrown from any layer, and one error handler (src/http/error-handler.ts) maps them to
 * responses. `message` is written for the partner's or operator's eyes: never a stack, SQL
 * or a path.
 */
export class AppError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly details: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class InvalidParameterError extends AppError {
  constructor(param: string, message: string) {
    super('invalid_parameter', message, 400, { param });
  }
}

export class NotFoundError extends AppError {
  constructor(message: string) {
    super('not_found', message, 404);
  }
}

export class MethodNotAllowedError extends AppError {
  constructor(method: string) {
    super('method_not_allowed', `Method ${method} is not supported: this API is read-only, use GET or HEAD.`, 405);
  }
}

export class ApiKeyError extends AppError {
  constructor(code: 'missing_api_key' | 'invalid_api_key' | 'revoked_api_key', message: string) {
    super(code, message, 401);
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
    super('service_unavailable', message, 503);
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
