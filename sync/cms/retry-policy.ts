import type { Clock } from '../../src/lib/time.js';

/*
 * The CMS client's retry policy, in one place: which answers are retried, how long to wait
 * before the next attempt (capped exponential backoff with full jitter, or what the CMS's
 * Retry-After says), and the wait itself. How many attempts and the total budget are settings
 * (CMS_* in src/config/); the loop that applies the policy is in http-client.ts.
 */

/** An HTTP status worth another attempt: the CMS is overloaded (429) or failing (5xx). */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/**
 * The wait before attempt `attempt + 1`: the CMS's Retry-After when it gave one, otherwise a
 * random share (`random` in [0, 1)) of `baseDelayMs * 2^(attempt - 1)`, capped at `maxDelayMs`.
 */
export function retryDelayMs(
  attempt: number,
  options: { baseDelayMs: number; maxDelayMs: number },
  retryAfterMs: number | undefined,
  random: () => number,
): number {
  const cap = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1));
  return retryAfterMs ?? random() * cap;
}

/** Delta seconds or an HTTP date, as milliseconds from now; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: Clock = Date.now): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now());
}

/** Sleeps `ms`, or rejects with the signal's reason as soon as it aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
