/**
 * Bytes that own exactly their memory. On Node 24 `Buffer.from(string)`, `Buffer.copyBytesFrom`
 * and zlib's sync functions return views into a shared 64 KB ArrayBuffer: a 4 KB gzipped answer
 * kept in a cache held a whole 64 KB slab, and two 31 KB list pages shared one that lived as long
 * as either. Caches weigh what they keep by its length (src/lib/lru.ts), so what they keep must
 * be that long (decision 0076).
 */
export function exactBytes(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes;
  const own = new Uint8Array(bytes.byteLength);
  own.set(bytes);
  return Buffer.from(own.buffer, 0, own.byteLength);
}

const utf8 = new TextEncoder();

/** `text` as UTF-8 in a Buffer of its own (TextEncoder allocates exactly the bytes it writes). */
export function utf8Bytes(text: string): Buffer {
  const bytes = utf8.encode(text);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
