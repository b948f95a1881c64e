/*
 * Chinese text read a character at a time, for highlighting (highlight.ts): which characters
 * are Han, as the index's expressions say, and where a character starts or ends when it is a
 * surrogate pair.
 */

/** A Han character, as the index and the highlighting split text. */
export const HAN = /\p{Script=Han}/u;

/** The second half of a surrogate pair. */
export const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * Whether a code point is Han, as HAN says: asked of the expression once per character of the
 * BMP and remembered. Walking a Chinese run a character at a time with the expression (a string
 * per character) was most of the highlighting of a Chinese hit outside ICU's segmenting.
 */
const hanInBmp = new Uint8Array(0x10000);
function isHanCode(c: number): boolean {
  if (c > 0xffff) return HAN.test(String.fromCodePoint(c));
  let known = hanInBmp[c]!;
  if (known === 0) hanInBmp[c] = known = HAN.test(String.fromCharCode(c)) ? 1 : 2;
  return known === 1;
}

/** The length (1 or 2 code units) of the Han character starting at `i`, or 0 (as text.codePointAt reads it). */
export function hanLengthAt(text: string, i: number): number {
  const c = text.codePointAt(i);
  return c === undefined || !isHanCode(c) ? 0 : c > 0xffff ? 2 : 1;
}

/** The length (1 or 2 code units) of the Han character ending just before `i`, or 0 (a surrogate pair is one character). */
export function hanLengthBefore(text: string, i: number): number {
  if (i <= 0) return 0;
  const low = text.charCodeAt(i - 1);
  if (i >= 2 && isLowSurrogate(low)) {
    const high = text.charCodeAt(i - 2);
    if (high >= 0xd800 && high <= 0xdbff) return isHanCode((high - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000) ? 2 : 0;
  }
  return isHanCode(low) ? 1 : 0;
}

/** The character (one code point, as a string) starting at `i`. */
export function codePointAt(text: string, i: number): string | undefined {
  const c = text.codePointAt(i);
  return c === undefined ? undefined : String.fromCodePoint(c);
}
