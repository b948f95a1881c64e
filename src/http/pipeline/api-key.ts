import type { RequestHandler, Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KeysStore } from '../../db/keys/keys-store.js';
import type { SnapshotStore, StoreSession } from '../../db/snapshot/snapshot-store.js';
import type { KeyVerifier } from '../../keys/verifier.js';
import type { Clock } from '../../lib/time.js';
import { contextOf } from './context.js';
import { rateLimited, type RateLimiter } from './rate-limit.js';
import { rateLimitHeaders, setHeaders } from './response-head.js';

export interface KeyCheckDeps {
  store: SnapshotStore;
  keysStore: KeysStore;
  keys: KeyVerifier;
  limiter: RateLimiter;
  clock: Clock;
}

/**
 * Checks the partner's key before anything else about the request, then charges the request
 * to the key's rate. The key is read from the X-API-Key header only. A request without a
 * valid key gets its 401 whatever else is wrong, a missing or locked snapshot included (the
 * keys live in their own database); when the keys database cannot answer, the request gets
 * a 503, never a 401, so no partner is refused because of our own failure. Every response to a valid key carries the RateLimit fields:
 * the decision is kept in the request context and the response's head is built from it
 * (src/http/pipeline/response-head.ts), by the fast path or by requireApiKey.
 *
 * Runs once per request: the fast path and Express both call it, and a request the fast path
 * hands over to Express gets the outcome (or the error) of the first check, so it is never
 * charged twice and its error still comes from the one error handler.
 */
export function checkKey(req: IncomingMessage, res: ServerResponse, deps: KeyCheckDeps): StoreSession {
  const context = contextOf(res);
  const done = context.keyCheck;
  if (done !== undefined) {
    if ('error' in done) throw done.error;
    return done.session;
  }
  try {
    const key = deps.keys.verify(req.headers['x-api-key'] as string | undefined, deps.keysStore.session());
    context.key = key;
    const session = deps.store.session();
    const decision = deps.limiter.take(key, deps.clock());
    if (decision) {
      context.rateLimit = decision;
      if (!decision.allowed) throw rateLimited(decision);
    }
    context.keyCheck = { session };
    return session;
  } catch (error) {
    context.keyCheck = { error };
    throw error;
  }
}

export function requireApiKey(deps: KeyCheckDeps): RequestHandler {
  return (req, res, next) => {
    try {
      checkKey(req, res, deps);
    } finally {
      // On the answer and on a refusal (a 503 rate_limited says when to come back) alike.
      setHeaders(res, rateLimitHeaders([], contextOf(res)));
    }
    next();
  };
}

/** The store session the key was checked against, for the routes behind requireApiKey. */
export function sessionOf(res: Response): StoreSession {
  const check = contextOf(res).keyCheck;
  if (!check || !('session' in check)) throw new Error('sessionOf: the route is not behind requireApiKey');
  return check.session;
}
