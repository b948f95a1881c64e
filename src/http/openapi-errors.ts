/*
 * Every error code a partner can meet, with its status, when it happens and an example body:
 * the OpenAPI document lists, per operation, the codes that apply to it (src/http/openapi.ts).
 * The table is the contract's (/work/shared/api-contract.md, "Errors").
 */

export interface ErrorCodeDoc {
  status: 400 | 401 | 404 | 405 | 503;
  when: string;
  message: string;
  /** Sent with Retry-After (seconds). */
  retryAfter?: boolean;
  param?: string;
}

export const ERROR_CODES = {
  invalid_parameter: {
    status: 400,
    when: 'A parameter breaks its rule; `param` names it.',
    message: 'limit must be a whole number from 1 to 50, written as plain digits.',
    param: 'limit',
  },
  invalid_cursor: {
    status: 400,
    when:
      "The change feed's `since` is not a cursor this feed can continue from: malformed (or never handed out by this feed), " +
      'from another snapshot (the feed was rebuilt), older than the retained history (a delete after it was pruned), or ' +
      'dated in the future. Start again without `since` and rebuild your copy from that answer.',
    message:
      'since is not a cursor this feed can continue from (malformed, from another snapshot, older than the retained history, ' +
      'or dated in the future); read the feed again without since and rebuild your copy from it.',
    param: 'since',
  },
  missing_api_key: {
    status: 401,
    when: 'No `X-API-Key` header, or an empty one.',
    message: 'Send your API key in the X-API-Key header.',
  },
  invalid_api_key: {
    status: 401,
    when: 'The key is unknown or malformed.',
    message: 'The API key is not valid; check that it was copied whole.',
  },
  revoked_api_key: {
    status: 401,
    when: 'The key was revoked: ask the editors for a new one.',
    message: 'This API key has been revoked; ask the editors for a new one.',
  },
  expired_api_key: {
    status: 401,
    when: 'The key passed the expiry date the editors gave it.',
    message: 'This API key has expired; ask the editors for a new one.',
  },
  not_found: {
    status: 404,
    when: 'No published article with this slug in this locale (or no such path).',
    message: 'No published article has the slug "no-such-story" in locale en.',
  },
  article_removed: {
    status: 404,
    when: 'The article was taken down; the change feed carries its delete.',
    message: 'The article "old-story" was removed; delete your copy.',
  },
  method_not_allowed: {
    status: 405,
    when: 'A method other than GET or HEAD (with `Allow: GET, HEAD`).',
    message: 'Method POST is not supported: this API is read-only, use GET or HEAD.',
  },
  service_unavailable: {
    status: 503,
    when: 'Our own store (or, for search, the search engine) cannot answer; retry after `Retry-After` seconds.',
    message: 'The service cannot read its content store right now; please retry in a minute.',
    retryAfter: true,
  },
  search_busy: {
    status: 503,
    when: 'Search is at capacity, or this key holds its share of it; retry after `Retry-After` seconds.',
    message: 'Search is busy right now; please retry in a few seconds.',
    retryAfter: true,
  },
  rate_limited: {
    status: 503,
    when: 'This key passed its request rate; retry after `Retry-After` seconds.',
    message: 'This API key sent too many requests; please retry after the time in Retry-After.',
    retryAfter: true,
  },
} as const satisfies Record<string, ErrorCodeDoc>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * Refusals by the HTTP server itself, before a request reaches an operation (src/http/server-limits.ts,
 * src/http/error-handler.ts): the same body shape, no X-Request-Id (there is no request yet).
 */
export const SERVER_REFUSALS = {
  invalid_request: 400,
  request_timeout: 408,
  expectation_failed: 417,
  headers_too_large: 431,
} as const;

/** What every keyed operation can answer, whatever its parameters. */
export const KEYED_ERRORS: readonly ErrorCode[] = [
  'missing_api_key',
  'invalid_api_key',
  'revoked_api_key',
  'expired_api_key',
  'service_unavailable',
  'rate_limited',
];
