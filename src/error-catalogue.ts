/*
 * Every error code the service answers with, and the one place each is described: its HTTP
 * status, when a partner gets it, which operations can answer it and an example body. AppError
 * (src/errors.ts) takes its status from here; the OpenAPI document's error lists
 * (src/http/contract/openapi-errors.ts) and docs/errors.md (test/docs/write-errors-doc.ts) are generated from
 * it. A new code is a new entry here: the compiler then refuses a code that is not.
 */

/**
 * The API's operations, by their OpenAPI operationId. src/http/contract/openapi-operations.ts is typed
 * by this list, so an entry below cannot name an operation that does not exist.
 */
export const OPERATION_IDS = [
  'listArticles',
  'getArticle',
  'listCategories',
  'searchArticles',
  'listChanges',
  'getHealth',
  'getOpenApi',
] as const;

export type OperationId = (typeof OPERATION_IDS)[number];

/**
 * Who can answer a code:
 * - `keyed`: every operation that needs an API key;
 * - a list: those operations only;
 * - `any`: any request, whatever its path (not listed per operation);
 * - `server`: the HTTP server itself, before a request reaches an operation (no X-Request-Id);
 * - `fault`: a bug of ours.
 */
export type ErrorScope = 'keyed' | 'any' | 'server' | 'fault' | readonly OperationId[];

export interface ErrorCodeSpec {
  status: 400 | 401 | 403 | 404 | 405 | 408 | 417 | 431 | 500 | 503;
  /** When it is answered, for the partner: one or two sentences in Markdown. */
  when: string;
  from: ErrorScope;
  /** A body such an answer can carry (the OpenAPI document's example). */
  example: { message: string; param?: string };
  /** Sent with Retry-After (seconds). */
  retryAfter?: true;
}

// The order is the one documents list codes in: keep related codes together.
export const ERROR_CATALOGUE = {
  invalid_parameter: {
    status: 400,
    when: 'A parameter breaks its rule; `param` names it.',
    from: ['listArticles', 'getArticle', 'listCategories', 'searchArticles', 'listChanges'],
    example: { message: 'limit must be a whole number from 1 to 50, written as plain digits.', param: 'limit' },
  },
  invalid_cursor: {
    status: 400,
    when:
      "The change feed's `since` is not a cursor this feed can continue from: malformed (or never handed out by this feed), " +
      'from another snapshot (the feed was rebuilt), older than the retained history (a delete after it was pruned), or ' +
      'dated in the future. Start again without `since` and rebuild your copy from that answer.',
    from: ['listChanges'],
    example: {
      message:
        'since is not a cursor this feed can continue from (malformed, from another snapshot, older than the retained history, ' +
        'or dated in the future); read the feed again without since and rebuild your copy from it.',
      param: 'since',
    },
  },
  missing_api_key: {
    status: 401,
    when: 'No `X-API-Key` header, or an empty one.',
    from: 'keyed',
    example: { message: 'Send your API key in the X-API-Key header.' },
  },
  invalid_api_key: {
    status: 401,
    when: 'The key is unknown or malformed.',
    from: 'keyed',
    example: { message: 'The API key is not valid; check that it was copied whole.' },
  },
  revoked_api_key: {
    status: 401,
    when: 'The key was revoked: ask the editors for a new one.',
    from: 'keyed',
    example: { message: 'This API key has been revoked; ask the editors for a new one.' },
  },
  expired_api_key: {
    status: 401,
    when: 'The key passed the expiry date the editors gave it, or the overlap of its rotation ended: use your new key.',
    from: 'keyed',
    example: { message: 'This API key has expired; ask the editors for a new one.' },
  },
  locale_not_allowed: {
    status: 403,
    when:
      "The key's scope does not include this locale (the editors license locales per key); the message names the locales it may use. " +
      'Ask the editors to widen the scope.',
    from: ['listArticles', 'getArticle', 'listCategories', 'searchArticles', 'listChanges'],
    example: { message: 'This API key may not read locale en; it may use: zh.', param: 'locale' },
  },
  not_found: {
    status: 404,
    when: 'No published article with this slug in this locale (or no such path).',
    from: ['getArticle'],
    example: { message: 'No published article has the slug "no-such-story" in locale en.' },
  },
  article_removed: {
    status: 404,
    when: 'The article was taken down; the change feed carries its delete.',
    from: ['getArticle'],
    example: { message: 'The article "old-story" was removed; delete your copy.' },
  },
  method_not_allowed: {
    status: 405,
    when: 'A method other than GET or HEAD (with `Allow: GET, HEAD`).',
    from: 'any',
    example: { message: 'Method POST is not supported: this API is read-only, use GET or HEAD.' },
  },
  service_unavailable: {
    status: 503,
    when: 'Our own store (the content snapshot or the keys database; for search, also the search engine) cannot answer; retry after `Retry-After` seconds. Never a 401: a key is not refused because of our failure.',
    from: 'keyed',
    example: { message: 'The service cannot read its content store right now; please retry in a minute.' },
    retryAfter: true,
  },
  search_busy: {
    status: 503,
    when: 'Search is at capacity, this key holds its share of it, or the search passed its time budget; retry after `Retry-After` seconds (other endpoints are not affected).',
    from: ['searchArticles'],
    example: { message: 'Search is busy right now; please retry in a few seconds.' },
    retryAfter: true,
  },
  rate_limited: {
    status: 503,
    when: 'This key passed its request rate; retry after `Retry-After` seconds.',
    from: 'keyed',
    example: { message: 'This API key sent too many requests; please retry after the time in Retry-After.' },
    retryAfter: true,
  },
  invalid_request: {
    status: 400,
    when: 'The request is not valid HTTP/1.1 (a bad request line, invalid characters, no `Host`).',
    from: 'server',
    example: { message: 'The request is not valid HTTP/1.1 and could not be read.' },
  },
  request_timeout: {
    status: 408,
    when: 'The request took longer to arrive than the server allows.',
    from: 'server',
    example: { message: 'The request took too long to arrive; send it again, whole.' },
  },
  expectation_failed: {
    status: 417,
    when: 'An `Expect` header other than `100-continue`.',
    from: 'server',
    example: { message: 'The Expect header is not supported; send the request without it.' },
  },
  headers_too_large: {
    status: 431,
    when: 'The request headers are larger than the server accepts.',
    from: 'server',
    example: { message: 'The request headers are too large; send fewer or shorter headers.' },
  },
  internal_error: {
    status: 500,
    when: 'A fault of ours; the answer reveals nothing else. Quote the `X-Request-Id` when you tell us.',
    from: 'fault',
    example: { message: 'Something went wrong on our side; please retry later.' },
  },
} as const satisfies Record<string, ErrorCodeSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** The status a code is always answered with. */
export type ErrorStatus<C extends ErrorCode> = (typeof ERROR_CATALOGUE)[C]['status'];

export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

export function statusOf<C extends ErrorCode>(code: C): ErrorStatus<C> {
  return ERROR_CATALOGUE[code].status;
}

/** The codes `operation` can answer besides those every keyed operation has, in catalogue order. */
export function codesOf(operation: OperationId): ErrorCode[] {
  return ERROR_CODES.filter((code) => {
    const from: ErrorScope = ERROR_CATALOGUE[code].from;
    return typeof from !== 'string' && from.includes(operation);
  });
}

/** The codes with this scope, in catalogue order. */
export function codesFrom(scope: 'keyed' | 'any' | 'server' | 'fault'): ErrorCode[] {
  return ERROR_CODES.filter((code) => ERROR_CATALOGUE[code].from === scope);
}
