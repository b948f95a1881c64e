import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { exactBytes } from '../../lib/exact-bytes.js';

/*
 * Compressed answers (RFC 9110 §8.4, §12.5.3). A JSON page of 40-80 KB is 10-20 KB gzipped, and
 * partners expect an API to speak gzip without a proxy in front. Rules:
 * - only when the client asks (Accept-Encoding, q-values honoured), and only for bodies of
 *   MIN_COMPRESSED_BYTES or more: below that the saving is less than the cost;
 * - brotli when the client rates it at least as high as gzip (browsers, curl --compressed),
 *   else gzip;
 * - each body is compressed once per coding and kept beside it (the response cache's entry, a
 *   /docs file): a cached answer is never compressed again;
 * - an encoded answer is another representation, with its own strong ETag (the identity one
 *   with `-gz` or `-br` before the closing quote) and `Vary: Accept-Encoding`.
 */

export type Coding = 'br' | 'gzip';

/** Bodies smaller than this are always sent as they are. */
export const MIN_COMPRESSED_BYTES = 1024;

/** A body that can be sent encoded: its encoded forms are kept on it, made on first use. */
export interface Encodable {
  readonly body: Buffer;
  readonly etag: string;
  encoded?: Partial<Record<Coding, Buffer>>;
}

/**
 * The coding to answer with for this Accept-Encoding, or undefined for the body as it is. A
 * coding not named takes `*`'s weight; q=0 refuses it. Identity is always acceptable to us:
 * no 406 (RFC 9110 allows ignoring an Accept-Encoding that refuses it).
 */
export function chooseCoding(field: string | string[] | undefined): Coding | undefined {
  if (field === undefined) return undefined;
  const text = Array.isArray(field) ? field.join(',') : field;
  if (text === '') return undefined;
  let br: number | undefined;
  let gzip: number | undefined;
  let any: number | undefined;
  for (const part of text.split(',')) {
    const semicolon = part.indexOf(';');
    const name = (semicolon === -1 ? part : part.slice(0, semicolon)).trim().toLowerCase();
    const weight = semicolon === -1 ? 1 : qOf(part.slice(semicolon + 1));
    if (name === 'br') br = weight;
    else if (name === 'gzip' || name === 'x-gzip') gzip = weight;
    else if (name === '*') any = weight;
  }
  const brWeight = br ?? any ?? 0;
  const gzipWeight = gzip ?? any ?? 0;
  if (brWeight <= 0 && gzipWeight <= 0) return undefined;
  return brWeight >= gzipWeight ? 'br' : 'gzip';
}

/** The q parameter of a coding's parameters; a malformed one counts as 0 (not acceptable). */
function qOf(params: string): number {
  for (const param of params.split(';')) {
    const eq = param.indexOf('=');
    if (eq === -1 || param.slice(0, eq).trim().toLowerCase() !== 'q') continue;
    const value = param.slice(eq + 1).trim();
    // RFC 9110 §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
    return /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value) ? Number(value) : 0;
  }
  return 1;
}

/** The coding this body is sent in for this request: none when it is small. */
export function codingFor(acceptEncoding: string | string[] | undefined, bodyBytes: number): Coding | undefined {
  return bodyBytes < MIN_COMPRESSED_BYTES ? undefined : chooseCoding(acceptEncoding);
}

/** Whether answers with this body vary with Accept-Encoding (the Vary header must say so). */
export function variesWithEncoding(bodyBytes: number): boolean {
  return bodyBytes >= MIN_COMPRESSED_BYTES;
}

const SUFFIX: Record<Coding, string> = { gzip: '-gz', br: '-br' };

/** The strong ETag of the encoded representation: `"abc"` gives `"abc-gz"`. */
export function encodedEtag(etag: string, coding: Coding | undefined): string {
  return coding === undefined ? etag : `${etag.slice(0, -1)}${SUFFIX[coding]}"`;
}

/**
 * The body in `coding`, compressed on first use and kept on `item`. Brotli at quality 5 and
 * gzip at level 6: about as fast as each other, a few milliseconds for 80 KB, paid once.
 */
export function encodedBody(item: Encodable, coding: Coding | undefined): Buffer {
  if (coding === undefined) return item.body;
  const kept = item.encoded?.[coding];
  if (kept) return kept;
  // Kept with the answer: zlib returns a view into a 64 KB slab, which would be kept whole.
  const made = exactBytes(
    coding === 'gzip'
      ? gzipSync(item.body, { level: 6 })
      : brotliCompressSync(item.body, {
          params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: item.body.length },
        }),
  );
  item.encoded = { ...item.encoded, [coding]: made };
  return made;
}
