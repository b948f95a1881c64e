import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Doorkeeper } from '../../lib/doorkeeper.js';
import { exactBytes, utf8Bytes } from '../../lib/exact-bytes.js';
import { entryBytes, Lru } from '../../lib/lru.js';
import { notModified } from './conditional.js';
import { contextOf } from '../pipeline/context.js';
import { linkHeader, type Paging } from './page-links.js';

/** Ends a response whose head is written: now, or with the other answers of its turn (src/http/fast/turn-ends.ts). */
export type EndResponse = (res: ServerResponse, body?: Buffer) => void;

export const endNow: EndResponse = (res, body) => {
  res.end(body);
};
import { codingFor, encodedBody, encodedEtag, variesWithEncoding, type Coding } from './encoding.js';

/** A serialized success response, ready to send any number of times. */
export interface Representation {
  body: Buffer;
  etag: string;
  /** A page of a list or of search results: sendRepresentation adds its Link header. */
  paging?: Paging;
  /** Right for this request only: sent, never kept by the response cache. */
  transient?: true;
  /** The same for every client and key (the OpenAPI document): shared caches may keep it. */
  keyless?: true;
  /** Its compressed forms, made on first use (src/http/cache/encoding.ts). */
  encoded?: Partial<Record<Coding, Buffer>>;
}

export function represent(value: unknown, paging?: Paging, options: { transient?: boolean; keyless?: boolean } = {}): Representation {
  const body = utf8Bytes(JSON.stringify(value));
  // A strong validator: the hash of the exact bytes, identical in every API process.
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
  const rep: Representation = paging ? { body, etag, paging } : { body, etag };
  if (options.transient) rep.transient = true;
  if (options.keyless) rep.keyless = true;
  return rep;
}

/**
 * Serialized responses keyed by request and content tag, bounded in bytes: each entry weighs
 * its body, its ETag, its key and a fixed overhead (src/lib/lru.ts), so that many small answers
 * (empty lists for distinct unknown sections) cannot outgrow the budget. The content tag
 * changes with each sync and each scheduled publication, so an entry is never stale; a
 * repeated request costs a map lookup instead of queries and serialization. An answer is kept
 * on its second request within the doorkeeper's memory, not its first (src/lib/doorkeeper.ts):
 * never-repeated searches and distinct unknown values then cost no cache memory.
 */
export class ResponseCache {
  private readonly lru: Lru<Representation>;
  private readonly doorkeeper: Doorkeeper | undefined;

  /** `options.everyAnswer`: keep an answer on its first request (tests that count entries). */
  constructor(maxBytes: number, options: { everyAnswer?: boolean } = {}) {
    this.lru = new Lru(maxBytes);
    this.doorkeeper = options.everyAnswer ? undefined : new Doorkeeper();
  }

  /**
   * The fast path's look: a hit counts, a miss does not, since the route that then answers
   * looks again (remember) and counts it. Each request counts once.
   */
  hit(key: string): Representation | undefined {
    return this.lru.get(key, false);
  }

  remember(key: string, make: () => Representation): Representation {
    const cached = this.lru.get(key);
    if (cached) return cached;
    return this.keep(key, make());
  }

  async rememberAsync(key: string, make: () => Promise<Representation>): Promise<Representation> {
    const cached = this.lru.get(key);
    if (cached) return cached;
    return this.keep(key, await make());
  }

  /** hits, misses, bytes (as weighed, never above the budget), entries: for metrics. */
  stats(): { hits: number; misses: number; bytes: number; entries: number } {
    return this.lru.stats();
  }

  private keep(key: string, made: Representation): Representation {
    if (made.transient || this.lru.maxWeight === 0) return made;
    if (this.doorkeeper && !this.doorkeeper.admit(key)) return made;
    // A Buffer may be a view into a shared slab, which keeping it would hold whole: a cached
    // body gets its own memory, the size it is weighed at.
    const body = exactBytes(made.body);
    const kept = body === made.body ? made : { ...made, body };
    // Room for its compressed forms, made when a client asks (JSON compresses to a fifth or
    // less: both together stay under half the body).
    const encodedRoom = variesWithEncoding(body.byteLength) ? Math.ceil(body.byteLength / 2) : 0;
    this.lru.set(key, kept, entryBytes(key, body.byteLength + encodedRoom + made.etag.length));
    return kept;
  }
}

const NO_PARAMS: ReadonlySet<string> = new Set();

/** Last-Modified of a time in ms: a repeated page repeats its time, so the last one is kept. */
let lastDate = { seconds: NaN, text: '' };
function httpDate(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds !== lastDate.seconds) lastDate = { seconds, text: new Date(seconds * 1000).toUTCString() };
  return lastDate.text;
}

/**
 * Cache-Control of every cacheable success. `max-age=300`: a partner's own cache keeps a copy
 * for five minutes (the partner terms). `s-maxage=0` with `proxy-revalidate`: a shared cache
 * (a proxy or CDN in front of the API, serving many keys) must revalidate with the API before
 * every reuse (RFC 9111 sections 5.2.2.8 and 5.2.2.10), so a revoked key is refused on its
 * next request instead of being served a stored copy for five minutes. nginx honours
 * s-maxage=0 by not storing the answer at all (checked with nginx 1.22: test/ops/nginx-proxy.test.ts).
 */
export const CACHE_CONTROL = 'public, max-age=300, s-maxage=0, proxy-revalidate';

/** The OpenAPI document: the same for everyone, no key needed, so shared caches keep it too. */
export const KEYLESS_CACHE_CONTROL = 'public, max-age=300';

/**
 * Sends a cacheable success: partners must cache for five minutes, and validators let them
 * revalidate cheaply. Answers 304 when the partner's copy is current, whatever the request's
 * own Cache-Control says (src/http/cache/conditional.ts). Both the routes and the fast path send
 * through here, so their headers cannot differ; the fast path passes the fields every
 * response starts with in `head` (src/http/pipeline/response-head.ts), and the whole head is written
 * in one writeHead call, and may end the response with the rest of its turn (`end`,
 * src/http/fast/turn-ends.ts).
 */
export function sendRepresentation(
  req: IncomingMessage,
  res: ServerResponse,
  rep: Representation,
  lastModifiedMs: number,
  head: string[] = [],
  end: EndResponse = endNow,
): void {
  // Compressed when the client asks and the body is worth it: another representation, with its
  // own ETag (src/http/cache/encoding.ts); the body is compressed only for a 200, once per entry.
  const coding = codingFor(req.headers['accept-encoding'], rep.body.length);
  const etag = encodedEtag(rep.etag, coding);
  const varies = variesWithEncoding(rep.body.length);
  const vary = rep.keyless ? (varies ? 'Accept-Encoding' : undefined) : varies ? 'X-API-Key, Accept-Encoding' : 'X-API-Key';
  head.push('Cache-Control', rep.keyless ? KEYLESS_CACHE_CONTROL : CACHE_CONTROL);
  if (vary) head.push('Vary', vary);
  head.push('ETag', etag, 'Last-Modified', httpDate(lastModifiedMs));
  if (rep.paging) {
    // The request was routed without PUBLIC_BASE_URL's path; the partner's URL has it.
    const context = contextOf(res);
    const link = linkHeader(context.basePath + (req.url ?? ''), rep.paging, context.route?.linkParams ?? NO_PARAMS);
    if (link) head.push('Link', link);
  }
  if (notModified(req.headers, etag, lastModifiedMs)) {
    res.writeHead(304, head);
    end(res);
    return;
  }
  const body = encodedBody(rep, coding);
  head.push('Content-Type', 'application/json; charset=utf-8');
  if (coding) head.push('Content-Encoding', coding);
  head.push('Content-Length', String(body.length));
  res.writeHead(200, head);
  // Node leaves the body out of a HEAD response by itself; the headers stay those of GET.
  end(res, body);
}
