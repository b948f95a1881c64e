import { encodedBody, type Coding } from '../../src/http/cache/encoding.js';

/*
 * What compressing an answer costs, paid once per cached answer and coding (the fast path then
 * sends the kept bytes): CPU per compression of a 50-item list page, and the bytes saved.
 */

export interface CompressionFigures {
  plainBytes: number;
  codings: Record<Coding, { bytes: number; cpuUs: number }>;
}

export function compressionCost(body: Buffer): CompressionFigures {
  const one = (coding: Coding) => {
    const runs = 30;
    let bytes = 0;
    const started = process.cpuUsage();
    for (let i = 0; i < runs; i++) bytes = encodedBody({ body, etag: '"x"' }, coding).length;
    const used = process.cpuUsage(started);
    return { bytes, cpuUs: (used.user + used.system) / runs };
  };
  return { plainBytes: body.length, codings: { gzip: one('gzip'), br: one('br') } };
}
