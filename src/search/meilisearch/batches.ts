import type { MeiliDocument } from './documents.js';

/** One upload: the documents as the JSON array sent, and how many there are. */
export interface DocumentBatch {
  json: string;
  count: number;
  bytes: number;
}

/**
 * Groups documents into uploads of at most `maxCount` documents and `maxBytes` bytes of JSON,
 * serialized once (the body is sent as is). A document larger than `maxBytes` on its own goes
 * alone: an article body is at most 2M characters (about 6 MB of UTF-8), far below
 * Meilisearch's 100 MB payload limit, so a single document always fits a request.
 */
export function* documentBatches(documents: Iterable<MeiliDocument>, maxCount: number, maxBytes: number): Generator<DocumentBatch> {
  let parts: string[] = [];
  let bytes = 2; // the brackets
  for (const document of documents) {
    const json = JSON.stringify(document);
    const size = Buffer.byteLength(json);
    if (parts.length > 0 && (parts.length >= maxCount || bytes + 1 + size > maxBytes)) {
      yield { json: `[${parts.join(',')}]`, count: parts.length, bytes };
      parts = [];
      bytes = 2;
    }
    bytes += (parts.length > 0 ? 1 : 0) + size;
    parts.push(json);
  }
  if (parts.length > 0) yield { json: `[${parts.join(',')}]`, count: parts.length, bytes };
}
