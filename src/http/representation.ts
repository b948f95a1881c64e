import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import fresh from 'fresh';
import { entryBytes, Lru } from '../lru.js';

/** A serialized success response, ready to send any number of times. */
export interface Representation {
  body: Buffer;
  etag: string;
}

export function represent(value: unknown): Representation {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  // A strong validator: the hash of the exact bytes, identical in every API process.
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
  return { body, etag };
}

/**
 * Serialized responses keyed by request and content tag, bounded in bytes: each entry weighs
 * its body, its ETag, its key and a fixed overhead (src/lru.ts), so that many small answers
 * (empty lists for distinct unknown sections) cannot outgrow the budget. The content tag
 * changes with each sync and each scheduled publication, so an entry is never stale; a
 * repeated request costs a map lookup instead of queries and serialization.
 */
export class ResponseCache {
  private readonly lru: Lru<Representation>;

  constructor(maxBytes: number) {
    this.lru = new Lru(maxBytes);
  }

  get(key: string): Representation | undefined {
    return this.lru.get(key);
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
    // A small Buffer is a slice of a shared 8 KB pool: kept alone it would hold the whole
    // slab. A cached body gets its own memory, the size it is weighed at.
    const body = made.body.byteLength === made.body.buffer.byteLength ? made.body : Buffer.copyBytesFrom(made.body);
    const kept = body === made.body ? made : { ...made, body };
    this.lru.set(key, kept, entryBytes(key, body.byteLength + made.etag.length));
    return kept;
  }
}

/**
 * Sends a cacheable success: partners must cache for five minutes, and validators let them
 * revalidate cheaply. Answers 304 when the partner's copy is current.
 */
export function sendRepresentation(req: IncomingMessage, res: ServerResponse, rep: Representation, lastModifiedMs: number): void {
  res.setHeader('Cache-Control', 'public, max-age=300');
  res.setHeader('Vary', 'X-API-Key');
  res.setHeader('ETag', rep.etag);
  res.setHeader('Last-Modified', new Date(Math.floor(lastModifiedMs / 1000) * 1000).toUTCString());
  if (fresh(req.headers, { etag: rep.etag, 'last-modified': res.getHeader('Last-Modified') as string })) {
    res.statusCode = 304;
    res.end();
    return;
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', rep.body.length);
  // Node leaves the body out of a HEAD response by itself; the headers stay those of GET.
  res.end(rep.body);
}
