import type { Logger } from '../../src/logger.js';
import type { Clock } from '../../src/lib/time.js';
import { CmsError, type CmsErrorKind } from './errors.js';
import { httpGet, type HttpAnswer } from './http-get.js';
import { abortableSleep, isRetryableStatus, parseRetryAfter, retryDelayMs } from './retry-policy.js';

// The CMS's retry policy has its own file; its Retry-After parser stays importable from here.
export { parseRetryAfter } from './retry-policy.js';

export interface CmsHttpClientOptions {
  /** e.g. `https://cms.example.com/export`; request paths are appended to its path. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`; never logged, never in an error message. */
  token?: string;
  /** Per attempt, from sending the request to the last byte of the body. */
  timeoutMs: number;
  /** Attempts per request, the first included. */
  maxAttempts: number;
  /** Total time one request may take across its retries; a wait that would pass it is not made. */
  retryBudgetMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxResponseBytes: number;
  logger: Logger;
  /** In [0, 1); the jitter source. Tests pass a constant. */
  random?: () => number;
  /** Waits between attempts; tests record the waits instead of sleeping. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Measures the retry budget and resolves `Retry-After` dates; Date.now by default. */
  now?: Clock;
}

export interface CmsHttpClient {
  /** GETs `pathAndQuery` (relative to baseUrl, starting with `/`) and returns the parsed JSON. */
  getJson(pathAndQuery: string, signal?: AbortSignal): Promise<unknown>;
}

const MAX_REDIRECTS = 3;
const ERROR_SNIPPET_BYTES = 4096;

interface Failure {
  kind: CmsErrorKind;
  cause: string;
  retryable: boolean;
  status?: number;
  retryAfterMs?: number;
}

// Thrown inside one attempt; the retry loop turns the last one into a CmsError.
class AttemptFailure extends Error {
  constructor(readonly failure: Failure) {
    super(failure.cause);
  }
}

function fail(failure: Failure): never {
  throw new AttemptFailure(failure);
}

/**
 * An HTTP client for the CMS that survives what real CMSs do: retries (the policy: which
 * answers, how long to wait, in retry-policy.ts) within a total retry budget, per-attempt timeouts,
 * same-origin redirects only, and a bound on the response size. Every failure is a CmsError.
 */
const MIN_REDACTED_LENGTH = 12;
const WITHHELD = '(withheld: it contains the CMS credentials)';

export function createCmsHttpClient(options: CmsHttpClientOptions): CmsHttpClient {
  const base = new URL(options.baseUrl);
  const headers: Record<string, string> = { accept: 'application/json' };
  const password = decodeURIComponent(base.password);
  if (options.token) {
    headers.authorization = `Bearer ${options.token}`;
  } else if (base.username || base.password) {
    // Credentials in the URL are sent the way a browser sends them, and never as part of a URL.
    const userInfo = `${decodeURIComponent(base.username)}:${password}`;
    headers.authorization = `Basic ${Buffer.from(userInfo).toString('base64')}`;
  }
  base.username = '';
  base.password = '';
  const basePath = base.pathname.replace(/\/+$/, '');
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? abortableSleep;
  const now = options.now ?? Date.now;
  const secrets = [options.token, password].filter((s): s is string => !!s);

  // No text the CMS sent, nor any cause, may carry a secret. The CMS's own text is redacted
  // before it is cut short (a secret across the cut would leave its start), and again in the
  // finished cause. A short secret (a test CMS's "secret", say) would also match ordinary words
  // and leave the text garbled ("missing or [redacted] bearer token"): such a text is withheld.
  const redact = (text: string): string =>
    secrets.reduce((t, secret) => {
      if (!t.includes(secret)) return t;
      return secret.length < MIN_REDACTED_LENGTH ? WITHHELD : t.split(secret).join('[redacted]');
    }, text);

  const toError = (request: string, failure: Failure, attempts: number): CmsError =>
    new CmsError({ ...failure, cause: redact(failure.cause), request, attempts });

  async function attempt(url: URL, callerSignal: AbortSignal | undefined): Promise<unknown> {
    const timeoutSignal = AbortSignal.timeout(options.timeoutMs);
    const signal = callerSignal ? AbortSignal.any([callerSignal, timeoutSignal]) : timeoutSignal;
    try {
      let current = url;
      for (let redirects = 0; ; redirects++) {
        const res = await httpGet(current, headers, signal);
        if (res.status >= 300 && res.status < 400) {
          res.discard();
          current = redirectTarget(res, current, base, redirects);
          continue;
        }
        if (res.status < 200 || res.status > 299) await failOnStatus(res, signal, now, redact);
        const text = await readBody(res, signal, options.maxResponseBytes);
        try {
          return JSON.parse(text) as unknown;
        } catch {
          return fail({ kind: 'invalid_json', cause: `body is not JSON (starts with ${preview(redact(text))})`, retryable: true });
        }
      }
    } catch (error) {
      if (callerSignal?.aborted) fail({ kind: 'aborted', cause: 'aborted by the caller', retryable: false });
      if (timeoutSignal.aborted) {
        fail({ kind: 'timeout', cause: `no complete answer within ${options.timeoutMs} ms`, retryable: true });
      }
      if (error instanceof AttemptFailure) throw error;
      return fail({ kind: 'unreachable', cause: networkCause(error), retryable: true });
    }
  }

  return {
    async getJson(pathAndQuery, signal) {
      const request = `GET ${pathAndQuery}`;
      const url = new URL(basePath + (pathAndQuery.startsWith('/') ? '' : '/') + pathAndQuery, base.origin);
      const start = now();
      const aborted: Failure = { kind: 'aborted', cause: 'aborted by the caller', retryable: false };
      for (let n = 1; ; n++) {
        if (signal?.aborted) throw toError(request, aborted, n - 1);
        let failure: Failure;
        try {
          return await attempt(url, signal);
        } catch (error) {
          if (!(error instanceof AttemptFailure)) throw error;
          failure = error.failure;
        }
        if (!failure.retryable || n >= options.maxAttempts) throw toError(request, failure, n);
        const waitMs = retryDelayMs(n, options, failure.retryAfterMs, random);
        if (now() - start + waitMs > options.retryBudgetMs) throw toError(request, failure, n);
        options.logger.warn(
          {
            request,
            attempt: n,
            maxAttempts: options.maxAttempts,
            waitMs: Math.round(waitMs),
            kind: failure.kind,
            reason: redact(failure.cause),
          },
          'CMS request failed; retrying',
        );
        try {
          await sleep(waitMs, signal);
        } catch (error) {
          if (!signal?.aborted) throw error;
        }
        if (signal?.aborted) throw toError(request, aborted, n);
      }
    },
  };
}

function redirectTarget(res: HttpAnswer, current: URL, base: URL, redirects: number): URL {
  const location = res.header('location');
  if (!location) {
    fail({ kind: 'http_status', cause: `HTTP ${res.status} without a Location header`, retryable: false, status: res.status });
  }
  let target: URL;
  try {
    target = new URL(location, current);
  } catch {
    return fail({ kind: 'redirect', cause: `HTTP ${res.status} to an invalid address`, retryable: false });
  }
  // Following a redirect to another host would hand it the bearer token.
  if (target.origin !== base.origin) {
    fail({ kind: 'redirect', cause: `HTTP ${res.status} to another origin (${target.origin})`, retryable: false });
  }
  if (redirects >= MAX_REDIRECTS) {
    fail({ kind: 'redirect', cause: `more than ${MAX_REDIRECTS} redirects`, retryable: false });
  }
  return target;
}

async function failOnStatus(res: HttpAnswer, signal: AbortSignal, now: Clock, redact: (text: string) => string): Promise<never> {
  const status = res.status;
  let detail = '';
  try {
    detail = errorDetail(redact(await readBody(res, signal, ERROR_SNIPPET_BYTES, true)));
  } catch (error) {
    if (signal.aborted) throw error;
  }
  const retryable = isRetryableStatus(status);
  // Any answer that will be retried says when it may be (429, 503 and the other 5xx alike).
  const retryAfterMs = retryable ? parseRetryAfter(res.header('retry-after') ?? null, now) : undefined;
  const cause = `HTTP ${status}${res.statusText ? ` ${res.statusText}` : ''}${detail ? `: ${detail}` : ''}`;
  return fail({ kind: 'http_status', cause, retryable, status, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
}

/**
 * Reads a body up to `maxBytes`, checking Content-Length first and counting while streaming.
 * With `truncate`, a longer body is cut at the bound instead of failing (error snippets).
 */
async function readBody(res: HttpAnswer, signal: AbortSignal, maxBytes: number, truncate = false): Promise<string> {
  const declared = Number(res.header('content-length') ?? Number.NaN);
  if (!truncate && Number.isFinite(declared) && declared > maxBytes) {
    res.discard();
    fail({ kind: 'too_large', cause: `Content-Length ${declared} exceeds the ${maxBytes}-byte bound`, retryable: false });
  }
  const chunks: Uint8Array[] = [];
  let received = 0;
  try {
    for await (const value of res.body) {
      received += value.byteLength;
      if (received > maxBytes) {
        res.discard();
        if (truncate) {
          chunks.push(value.subarray(0, value.byteLength - (received - maxBytes)));
          break;
        }
        fail({ kind: 'too_large', cause: `body exceeds the ${maxBytes}-byte bound`, retryable: false });
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof AttemptFailure || signal.aborted) throw error;
    const of = Number.isFinite(declared) ? ` of ${declared}` : '';
    fail({ kind: 'invalid_json', cause: `body cut off after ${received}${of} bytes (${networkCause(error)})`, retryable: true });
  }
  try {
    return new TextDecoder('utf-8', { fatal: !truncate }).decode(Buffer.concat(chunks));
  } catch {
    return fail({ kind: 'invalid_json', cause: 'body is not valid UTF-8', retryable: true });
  }
}

const NETWORK_CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS lookup failed)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection closed by the CMS',
};

// The reason may be nested in `cause` (sometimes an AggregateError, for a host with several addresses).
function networkCause(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return NETWORK_CAUSES[code] ?? `${code}: ${current.message}`;
    const nested: unknown = current instanceof AggregateError ? current.errors[0] : current.cause;
    if (nested === undefined) return current.message;
    current = nested;
  }
  return String(current);
}

// An error body is often `{"error":{"message":...}}`; otherwise show its start.
function errorDetail(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message =
      typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message);
    if (typeof message === 'string') return message.slice(0, 200);
  } catch {
    // not JSON: fall through
  }
  return text.trim().slice(0, 120);
}

function preview(text: string): string {
  return text.length === 0 ? 'nothing: empty body' : JSON.stringify(text.slice(0, 40));
}
