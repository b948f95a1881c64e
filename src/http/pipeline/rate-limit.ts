import { RateLimitedError } from '../../errors.js';
import type { VerifiedKey } from '../../keys/verifier.js';

/*
 * Per-key request rates, as a token bucket kept with GCRA (one timestamp per key: the time at
 * which the key's bucket would be full again). A key may send its burst at once, then its
 * rate; a refused request costs nothing. State is per process: with N API processes on a host,
 * each enforces 1/N of every key's rate and burst (docs/decisions/0007-rate-limits-across-processes.md), so the
 * host as a whole never lets a key past its rate and no request pays for shared state.
 */

export interface RateLimitSettings {
  /** Default requests per minute per key; 0: no limit for keys without their own rate. */
  perMinute: number;
  /** The burst, as seconds' worth of a key's rate that it may send at once. */
  burstSeconds: number;
  /** API processes sharing the host's rate (WEB_CONCURRENCY); each enforces 1/processes. */
  processes: number;
}

/** What the headers of one request say. */
export interface RateDecision {
  allowed: boolean;
  /** `RateLimit-Policy` (the key's whole policy, the same in every process). */
  policy: string;
  /** `RateLimit` (what this process will still accept, so never more than is left). */
  current: string;
  /** For a refusal: whole seconds until a request will be accepted. */
  retryAfterSeconds: number;
}

interface Bucket {
  /** The key's rate the bucket was built for (its override may change). */
  perMinute: number;
  /** Milliseconds between two requests at this process's share of the rate. */
  intervalMs: number;
  /** Requests this process accepts at once from an idle key. */
  burst: number;
  /** When the bucket is full again (GCRA's theoretical arrival time), in ms since `epoch`. */
  fullAt: number;
  policy: string;
}

// Draft-10 fields are lists of named policies; this API has one policy per key.
const POLICY_NAME = '"default"';

/** Keys' request rates in this process. `take` is called once per request with a valid key. */
export class RateLimiter {
  private readonly buckets = new Map<number, Bucket>();
  private refused = 0;
  private admitted = 0;

  // Times are kept relative to the first request: added to an absolute Date.now(), a high
  // rate's interval (6e-5 ms at 1e9 per minute) would be lost to rounding.
  private epoch: number | undefined;

  constructor(private readonly settings: RateLimitSettings) {}

  /** Charges one request to the key, or refuses it; undefined when the key has no limit. */
  take(key: VerifiedKey, at: number): RateDecision | undefined {
    // A key's own rate wins; the default of 0 means "no limit" for keys without one.
    const perMinute = key.rateLimitPerMinute !== null && key.rateLimitPerMinute > 0 ? key.rateLimitPerMinute : this.settings.perMinute;
    if (perMinute <= 0) return undefined;
    this.epoch ??= at;
    const now = at - this.epoch;
    const bucket = this.bucketOf(key.id, perMinute, now);
    const start = Math.max(bucket.fullAt, now);
    const tolerance = (bucket.burst - 1) * bucket.intervalMs;
    if (start - now > tolerance) {
      this.refused += 1;
      return {
        allowed: false,
        policy: bucket.policy,
        current: `${POLICY_NAME};r=0;t=${Math.max(1, Math.ceil((start - now) / 1000))}`,
        retryAfterSeconds: Math.max(1, Math.ceil((start - now - tolerance) / 1000)),
      };
    }
    this.admitted += 1;
    bucket.fullAt = start + bucket.intervalMs;
    const ahead = bucket.fullAt - now;
    // Whole requests left; the epsilon absorbs rounding when `ahead` is a whole number of intervals.
    const remaining = Math.max(0, Math.floor(bucket.burst - ahead / bucket.intervalMs + 1e-6));
    return {
      allowed: true,
      policy: bucket.policy,
      current: `${POLICY_NAME};r=${remaining};t=${Math.max(1, Math.ceil(ahead / 1000))}`,
      retryAfterSeconds: 0,
    };
  }

  /**
   * Gives back `fraction` of one request's cost to a key charged earlier (a 304: see
   * src/http/pipeline/revalidation-discount.ts). Never more than was charged: a bucket already
   * full, or rebuilt since, is left alone.
   */
  refund(keyId: number, fraction: number, at: number): void {
    const bucket = this.buckets.get(keyId);
    if (!bucket || this.epoch === undefined) return;
    const now = at - this.epoch;
    if (bucket.fullAt <= now) return;
    bucket.fullAt = Math.max(now, bucket.fullAt - fraction * bucket.intervalMs);
  }

  /** Plain numbers for the metrics: requests accepted and refused since start. */
  stats(): { admitted: number; refused: number; keys: number } {
    return { admitted: this.admitted, refused: this.refused, keys: this.buckets.size };
  }

  private bucketOf(id: number, perMinute: number, now: number): Bucket {
    const known = this.buckets.get(id);
    if (known && known.perMinute === perMinute) return known;
    if (this.buckets.size >= 10_000) this.forgetIdle(now);
    const processes = Math.max(1, this.settings.processes);
    // The key's burst over the whole host, then this process's share of rate and burst.
    const burst = Math.max(1, Math.ceil((perMinute * this.settings.burstSeconds) / 60));
    const window = Math.ceil((burst * 60) / perMinute);
    const bucket: Bucket = {
      perMinute,
      intervalMs: (60_000 * processes) / perMinute,
      burst: Math.max(1, Math.ceil(burst / processes)),
      // A new or changed rate starts with a full bucket.
      fullAt: now,
      // q requests per w seconds, w rounded up: a client that follows it is never refused.
      policy: `${POLICY_NAME};q=${burst};w=${window}`,
    };
    this.buckets.set(id, bucket);
    return bucket;
  }

  /** A bucket that is full again is the same as no bucket: drop those. */
  private forgetIdle(now: number): void {
    for (const [id, bucket] of this.buckets) if (bucket.fullAt <= now) this.buckets.delete(id);
  }
}

/** The 503 for a refused request; its headers repeat the RateLimit fields. */
export function rateLimited(decision: RateDecision): RateLimitedError {
  const wait = decision.retryAfterSeconds;
  return new RateLimitedError(
    `This API key passed its request rate; retry in ${wait} second${wait === 1 ? '' : 's'} (see the RateLimit headers).`,
    { 'Retry-After': String(wait), 'RateLimit-Policy': decision.policy, RateLimit: decision.current },
  );
}
