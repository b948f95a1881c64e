/** Meilisearch's error object, as it appears in HTTP answers and in failed tasks. */
export interface MeiliErrorBody {
  message: string;
  code: string;
  type: 'invalid_request' | 'internal' | 'auth' | 'system';
  link: string;
}

// The real engine classifies every code into one of four types; the few auth and system codes
// are listed, everything else a client can cause is `invalid_request`.
const AUTH_CODES = new Set(['missing_authorization_header', 'invalid_api_key']);
const SYSTEM_CODES = new Set(['no_space_left_on_device', 'io_error', 'too_many_open_files']);

export function errorType(code: string): MeiliErrorBody['type'] {
  if (AUTH_CODES.has(code)) return 'auth';
  if (SYSTEM_CODES.has(code)) return 'system';
  if (code === 'internal' || code === 'unretrievable_document' || code === 'database_size_limit_reached') return 'internal';
  return 'invalid_request';
}

export function errorBody(code: string, message: string, type?: MeiliErrorBody['type']): MeiliErrorBody {
  return { message, code, type: type ?? errorType(code), link: `https://docs.meilisearch.com/errors#${code}` };
}

/** Thrown anywhere in the fake; the HTTP layer answers it, the task runner stores it in the task. */
export class MeiliError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }

  body(): MeiliErrorBody {
    return errorBody(this.code, this.message);
  }
}

export const badRequest = (code: string, message: string): MeiliError => new MeiliError(400, code, message);

/** What a client sees when it touches something this fake does not model: loud, never a silent pass. */
export const notImplemented = (what: string): MeiliError =>
  new MeiliError(501, 'fake_not_implemented', `The fake Meilisearch does not implement ${what}.`);

export const indexNotFound = (uid: string): MeiliError => new MeiliError(404, 'index_not_found', `Index \`${uid}\` not found.`);

/** Deserr's wording for a value of the wrong type, e.g. `.limit` given a string. */
export function invalidType(code: string, path: string, expected: string, value: unknown): MeiliError {
  return badRequest(code, `Invalid value type at \`${path}\`: expected ${expected}, but found ${describeJson(value)}`);
}

export function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array: \`${JSON.stringify(value)}\``;
  switch (typeof value) {
    case 'string':
      return `a string: \`${JSON.stringify(value)}\``;
    case 'number':
      return Number.isInteger(value) ? `an integer: \`${value}\`` : `a float: \`${value}\``;
    case 'boolean':
      return `a boolean: \`${String(value)}\``;
    default:
      return `an object: \`${JSON.stringify(value)}\``;
  }
}

export function unknownField(path: string, field: string, expected: readonly string[]): MeiliError {
  const where = path === '' ? '' : ` inside \`${path}\``;
  return badRequest(
    'bad_request',
    `Unknown field \`${field}\`${where}: expected one of ${expected.map((f) => `\`${f}\``).join(', ')}`,
  );
}
