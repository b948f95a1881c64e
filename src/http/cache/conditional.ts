import type { IncomingHttpHeaders } from 'node:http';

/*
 * Request preconditions of a GET or HEAD, as an origin server evaluates them (RFC 9110
 * §13.1.1-13.1.3, §13.2.2). The `fresh` package answers whether a *cache* may reuse its copy
 * and so gives up when the request says `Cache-Control: no-cache`, which Node's fetch and
 * browsers add to every conditional request: an origin must evaluate If-None-Match anyway.
 */

/** The opaque part of an entity tag, without its weak marker: `W/"x"` and `"x"` give `"x"`. */
function opaque(tag: string): string {
  const trimmed = tag.trim();
  return trimmed.startsWith('W/') ? trimmed.slice(2) : trimmed;
}

/**
 * If-None-Match with weak comparison (§13.1.2): true when the field is `*` or lists a tag
 * whose opaque part equals the current one's. Tags are quoted strings without commas here
 * (src/http/cache/representation.ts makes them), so a split on commas is exact for a match.
 */
export function noneMatchHits(field: string, etag: string): boolean {
  if (field.trim() === '*') return true;
  const current = opaque(etag);
  return field.split(',').some((tag) => opaque(tag) === current);
}

/**
 * True when the partner's copy is current and a 304 is the answer. If-Modified-Since is
 * looked at only when no If-None-Match was sent (§13.2.2 step 4), and only when it is a valid
 * HTTP date; a date in the future is as good as the present (the copy cannot be newer).
 */
export function notModified(headers: IncomingHttpHeaders, etag: string, lastModifiedMs: number): boolean {
  const noneMatch = headers['if-none-match'];
  if (noneMatch !== undefined) return noneMatchHits(noneMatch, etag);
  const since = headers['if-modified-since'];
  if (since === undefined) return false;
  const sinceMs = Date.parse(since);
  if (Number.isNaN(sinceMs)) return false;
  // HTTP dates have whole seconds: compare at that precision, as Last-Modified was sent.
  return Math.floor(lastModifiedMs / 1000) * 1000 <= sinceMs;
}
