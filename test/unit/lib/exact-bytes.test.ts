import { describe, expect, it } from 'vitest';
import { exactBytes, utf8Bytes } from '../../../src/lib/exact-bytes.js';
import { represent } from '../../../src/http/cache/representation.js';
import { encodedBody } from '../../../src/http/cache/encoding.js';

const owns = (b: Buffer) => b.byteOffset === 0 && b.buffer.byteLength === b.byteLength;
const page = { data: Array.from({ length: 50 }, (_, i) => ({ slug: `article-${i}`, title: `Fiber laser news ${i} …`, excerpt: 'x'.repeat(500) })) };

describe('bytes a cache keeps own exactly their memory', () => {
  it('copies a view into a shared slab, and leaves a Buffer that owns its memory as it is', () => {
    const view = Buffer.from('x'.repeat(31_000));
    const own = exactBytes(view);
    expect(owns(own)).toBe(true);
    expect(own.equals(view)).toBe(true);
    expect(exactBytes(own)).toBe(own);
  });

  it('serializes an answer into a Buffer of exactly its bytes, UTF-8 included', () => {
    const text = JSON.stringify(page);
    const body = utf8Bytes(text);
    expect(owns(body)).toBe(true);
    expect(body.toString('utf8')).toBe(text);
    expect(owns(represent(page).body)).toBe(true);
  });

  it('keeps compressed forms in memory of their own size, not zlib\'s 64 KB output slab', () => {
    const rep = represent(page);
    for (const coding of ['gzip', 'br'] as const) {
      const encoded = encodedBody(rep, coding);
      expect(owns(encoded), coding).toBe(true);
      expect(encoded.byteLength).toBeLessThan(rep.body.byteLength / 3);
    }
  });
});
