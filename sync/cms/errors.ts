/**
 * Why a CMS request failed. The worker logs the message and decides from `retryable` whether
 * a later run may succeed; `kind` is for metrics and tests.
 *
 * - `unreachable`: no connection, or it broke before an answer (refused, reset, DNS).
 * - `timeout`: no complete answer within the per-request timeout.
 * - `http_status`: an error status (4xx, 5xx) or a 3xx without a usable Location.
 * - `invalid_json`: the body is not JSON, including a body cut off mid-way.
 * - `invalid_response`: well-formed JSON of the wrong shape (decided by the adapter).
 * - `too_large`: the body exceeds the configured bound.
 * - `redirect`: a redirect to another origin, or too many redirects.
 * - `aborted`: the caller gave up (shutdown).
 */
export type CmsErrorKind =
  | 'unreachable'
  | 'timeout'
  | 'http_status'
  | 'invalid_json'
  | 'invalid_response'
  | 'too_large'
  | 'redirect'
  | 'aborted';

const LABELS: Record<CmsErrorKind, string> = {
  unreachable: 'CMS unreachable',
  timeout: 'CMS timed out',
  http_status: 'CMS error response',
  invalid_json: 'CMS sent invalid JSON',
  invalid_response: 'CMS sent an unexpected response',
  too_large: 'CMS response too large',
  redirect: 'CMS redirect refused',
  aborted: 'CMS request aborted',
};

export interface CmsErrorInit {
  kind: CmsErrorKind;
  /** The request as `GET /articles?locale=en&page=3&per_page=100`: no host, no token. */
  request: string;
  /** One line for an operator: what went wrong. */
  cause: string;
  retryable: boolean;
  /** HTTP status when the CMS answered one. */
  status?: number;
  /** How many attempts were made before giving up. */
  attempts?: number;
}

/**
 * A failed CMS request. The message is one line naming the request and the cause, e.g.
 * `CMS unreachable: GET /articles?locale=en&page=3&per_page=100: connection refused (3 attempts)`.
 */
export class CmsError extends Error {
  override name = 'CmsError';
  readonly kind: CmsErrorKind;
  readonly retryable: boolean;
  readonly request: string;
  readonly reason: string;
  readonly status: number | undefined;
  readonly attempts: number;

  constructor(init: CmsErrorInit) {
    const attempts = init.attempts ?? 1;
    const suffix = attempts > 1 ? ` (${attempts} attempts)` : '';
    super(`${LABELS[init.kind]}: ${init.request}: ${oneLine(init.cause)}${suffix}`);
    this.kind = init.kind;
    this.retryable = init.retryable;
    this.request = init.request;
    this.reason = oneLine(init.cause);
    this.status = init.status;
    this.attempts = attempts;
  }
}

/** Removes `user:pass@` from any URL in a text, so credentials never reach a log line. */
function stripUserInfo(text: string): string {
  return text.replace(/(\/\/)[^/\s@]*@/g, '$1');
}

// Causes can come from the network stack or a CMS error page: keep them to one short line.
function oneLine(text: string): string {
  const flat = stripUserInfo(text).replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 297)}...` : flat;
}
