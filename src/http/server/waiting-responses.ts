import type { ServerResponse } from 'node:http';

/*
 * A response that is waiting (the change feed's `wait`, src/http/routes/feed-wait.ts) carries
 * how to answer it at once. The connection room (src/http/server/server-limits.ts) uses it to
 * make room for a new client when every connection is busy: a waiting request is answered
 * (the empty page, Connection: close) instead of the new client being refused.
 */

const RELEASE = Symbol('answer this waiting response now');

type Marked = ServerResponse & { [RELEASE]?: () => void };

/** Marks a response as waiting; `release` answers it at once, with Connection: close. */
export function markWaiting(res: ServerResponse, release: () => void): void {
  (res as Marked)[RELEASE] = release;
}

export function unmarkWaiting(res: ServerResponse): void {
  delete (res as Marked)[RELEASE];
}

/** How to answer a waiting response now, or undefined when it is not waiting. */
export function releaseOf(res: unknown): (() => void) | undefined {
  return (res as Marked | null | undefined)?.[RELEASE];
}
