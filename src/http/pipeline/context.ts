import type { ServerResponse } from 'node:http';
import type { StoreSession } from '../../db/snapshot/snapshot-store.js';
import type { VerifiedKey } from '../../keys/verifier.js';
import type { RateDecision } from './rate-limit.js';
import type { Route } from '../endpoints/routes-table.js';

/**
 * What the API learns about one request while answering it, in one typed place: read by the
 * request log (and any per-response hook), written the same way by the fast path and by
 * Express, which both see the same response object. Replaces Express's untyped `res.locals`,
 * which the fast path had to fake.
 */
export interface RequestContext {
  /** When the request arrived (Date.now()), for the response time. */
  readonly startedAt: number;
  /** Echoed in X-Request-Id and logged on every line about this request. */
  readonly requestId: string;
  /**
   * The route of the request's path (src/http/endpoints/routes-table.ts), matched once when the context
   * is created; undefined for a path no route answers (a 404).
   */
  readonly route: Route | undefined;
  /** The partner's key once it is verified (logged), even when its rate then refused the request. */
  key: VerifiedKey | undefined;
  /**
   * The outcome of the key check (src/http/pipeline/api-key.ts), undefined until it ran. It runs
   * once: a request the fast path hands over to Express is neither checked nor charged twice.
   */
  keyCheck: KeyCheck | undefined;
  /** The rate-limit decision for this request, when the key was charged. */
  rateLimit: RateDecision | undefined;
  /** The error code sent, when the answer is an error. */
  errorCode: string | undefined;
  /** For a 503: the operator-facing reason (never sent to the partner). */
  errorReason: string | undefined;
  /** Answered from the response cache by the fast path, without entering Express. */
  fastPath: boolean;
  /** PUBLIC_BASE_URL's path ('' at the root): the URLs the API writes (Link) start with it. */
  basePath: string;
}

/**
 * A passed check holds the store session the key was checked against (the route reads content
 * through it); a failed one what it threw, thrown again to Express's error handler.
 */
export type KeyCheck = { readonly session: StoreSession } | { readonly error: unknown };

const CONTEXT = Symbol('requestContext');

type WithContext = ServerResponse & { [CONTEXT]?: RequestContext };

/** Creates the context of a new request; called once, first thing, by src/app.ts. */
export function beginContext(res: ServerResponse, requestId: string, startedAt: number, route: Route | undefined): RequestContext {
  const context: RequestContext = {
    startedAt,
    requestId,
    route,
    key: undefined,
    keyCheck: undefined,
    rateLimit: undefined,
    errorCode: undefined,
    errorReason: undefined,
    fastPath: false,
    basePath: '',
  };
  (res as WithContext)[CONTEXT] = context;
  return context;
}

/** The context of the request this response answers. */
export function contextOf(res: ServerResponse): RequestContext {
  const context = (res as WithContext)[CONTEXT];
  if (!context) throw new Error('no request context: the response did not go through createApp');
  return context;
}
