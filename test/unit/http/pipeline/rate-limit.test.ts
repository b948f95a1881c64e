import { describe, expect, it } from 'vitest';
import { RateLimiter, rateLimited } from '../../../../src/http/pipeline/rate-limit.js';

const T0 = Date.parse('2026-11-01T12:00:00Z');
const key = (id: number, rateLimitPerMinute: number | null = null) => ({ id, rateLimitPerMinute });

/** How many requests in a row the limiter accepts at one instant. */
function burst(limiter: RateLimiter, k: ReturnType<typeof key>, at: number): number {
  let n = 0;
  while (limiter.take(k, at)?.allowed) n += 1;
  return n;
}

describe('RateLimiter', () => {
  it('accepts the burst at once, then one request per interval', () => {
    const limiter = new RateLimiter({ perMinute: 600, burstSeconds: 10, processes: 1 });
    expect(burst(limiter, key(1), T0)).toBe(100);
    const refused = limiter.take(key(1), T0)!;
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterSeconds).toBe(1);
    expect(refused.policy).toBe('"default";q=100;w=10');
    expect(limiter.take(key(1), T0 + 100)!.allowed).toBe(true);
    expect(limiter.take(key(1), T0 + 100)!.allowed).toBe(false);
    // The loop's last try and the two refusals above.
    expect(limiter.stats()).toMatchObject({ admitted: 101, refused: 3 });
  });

  it("uses a key's own rate when it has one, and the default when it is null", () => {
    const limiter = new RateLimiter({ perMinute: 60, burstSeconds: 10, processes: 1 });
    expect(burst(limiter, key(1, 600), T0)).toBe(100);
    expect(burst(limiter, key(2, null), T0)).toBe(10);
    expect(limiter.take(key(1, 600), T0)!.policy).toBe('"default";q=100;w=10');
    expect(limiter.take(key(2), T0)!.policy).toBe('"default";q=10;w=10');
    // A changed override takes effect on the next request, with a full bucket.
    expect(limiter.take(key(2, 6000), T0 + 1)!.allowed).toBe(true);
  });

  it('enforces its share of the rate in each of N processes, never more than the whole in sum', () => {
    const one = new RateLimiter({ perMinute: 600, burstSeconds: 10, processes: 3 });
    expect(burst(one, key(1), T0)).toBe(34);
    // A third of the rate: the next request is accepted 300 ms later, not 100 ms.
    expect(one.take(key(1), T0 + 200)!.allowed).toBe(false);
    expect(one.take(key(1), T0 + 300)!.allowed).toBe(true);
    // The policy announced is the key's whole policy, the same in every process.
    expect(one.take(key(1), T0 + 300)!.policy).toBe('"default";q=100;w=10');
    // Over a minute after the burst, three processes together accept about 600 more.
    const processes = [0, 1, 2].map(() => new RateLimiter({ perMinute: 600, burstSeconds: 10, processes: 3 }));
    let accepted = 0;
    for (let ms = 0; ms < 60_000; ms += 10) for (const p of processes) if (p.take(key(1), T0 + ms)!.allowed) accepted += 1;
    expect(accepted).toBeGreaterThanOrEqual(100 + 597);
    expect(accepted).toBeLessThanOrEqual(102 + 600);
  });

  it('keeps exact time at very high rates', () => {
    const limiter = new RateLimiter({ perMinute: 1_000_000_000, burstSeconds: 10, processes: 1 });
    const first = limiter.take(key(1), T0)!;
    const second = limiter.take(key(1), T0)!;
    expect(/r=(\d+)/.exec(first.current)![1]).toBe('166666666');
    expect(/r=(\d+)/.exec(second.current)![1]).toBe('166666665');
  });

  it('leaves keys without their own rate unlimited when the default is 0, and still limits the others', () => {
    const limiter = new RateLimiter({ perMinute: 0, burstSeconds: 10, processes: 1 });
    expect(limiter.take(key(1), T0)).toBeUndefined();
    expect(burst(limiter, key(2, 60), T0)).toBe(10);
  });

  it('refuses with a 503 rate_limited that carries Retry-After and the RateLimit fields', () => {
    const limiter = new RateLimiter({ perMinute: 6, burstSeconds: 10, processes: 1 });
    limiter.take(key(1), T0);
    const error = rateLimited(limiter.take(key(1), T0)!);
    expect(error).toMatchObject({ code: 'rate_limited', status: 503 });
    expect(error.headers).toEqual({ 'Retry-After': '10', 'RateLimit-Policy': '"default";q=1;w=10', RateLimit: '"default";r=0;t=10' });
  });
});
