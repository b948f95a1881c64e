import type { ServerResponse } from 'node:http';
import type { RequestContext } from './context.js';

/*
 * Response headers as flat `[name, value, ...]` lists, handed to res.writeHead in one call.
 * Profiled on a cached page, the same two dozen headers cost about as much CPU as all of bare
 * node:http's answer when set one by one with setHeader (each is validated, lower-cased and
 * kept in a map, which is then walked again), and a third of that as one list given to writeHead
 * on a response that has no header set yet. The fast path builds its whole head that way;
 * Express's responses set the same fields with setHeader.
 */

/**
 * The fields every response starts with: the request id (echoed for support), helmet's
 * security headers, and the key's RateLimit fields once the request was charged to its key.
 */
export function leadingHeaders(context: RequestContext, security: readonly string[]): string[] {
  const head = ['X-Request-Id', context.requestId, ...security];
  rateLimitHeaders(head, context);
  return head;
}

/** Appends the RateLimit fields of the request's rate decision, when it has one. */
export function rateLimitHeaders(head: string[], context: RequestContext): string[] {
  const decision = context.rateLimit;
  if (decision) head.push('RateLimit-Policy', decision.policy, 'RateLimit', decision.current);
  return head;
}

/** Sets a flat list of fields on a response whose head is not written yet. */
export function setHeaders(res: ServerResponse, head: readonly string[]): void {
  for (let i = 0; i < head.length; i += 2) res.setHeader(head[i]!, head[i + 1]!);
}
