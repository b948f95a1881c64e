import type { Clock } from '../../lib/time.js';
import type { RateLimiter } from './rate-limit.js';
import type { ResponseHook } from './request-log.js';

/*
 * A 304 costs a partner half a request of its rate. A partner that revalidates (If-None-Match,
 * If-Modified-Since) does what the partners' guide asks and costs us a lookup in the response
 * cache and a head, no body: it should not pay as much as one that fetches everything again.
 * The key is charged one request before the answer is known (the check comes first), and half
 * of it is given back once the answer turns out to be a 304. Not free: a client looping on
 * revalidations is still limited, at twice the key's rate.
 */
export const REVALIDATION_COST = 0.5;

/** The per-response hook that gives back the rest of a 304's cost. */
export function revalidationDiscount(limiter: RateLimiter, clock: Clock): ResponseHook {
  return (_req, res, context) => {
    if (res.statusCode !== 304 || !context.key || !context.rateLimit?.allowed) return;
    limiter.refund(context.key.id, 1 - REVALIDATION_COST, clock());
  };
}
