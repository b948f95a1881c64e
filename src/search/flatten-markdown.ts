/*
 * The text side of highlighting: a Markdown body flattened to the plain text a partner sees in
 * a search excerpt, with the offset map that puts matches found in the source onto that text,
 * and HTML escaping. Kept apart from highlight.ts, which finds and marks the query's words.
 */

// Markdown and HTML that a plain-text excerpt leaves out: tags and comments, images and link
// targets (their text stays), heading, list and quote markers, emphasis and code marks.
const MARKUP =
  /<!--[\s\S]*?(?:-->|$)|<\/?[A-Za-z][^<>]*>|!?\[(?=[^[\]\n]*\]\()|\]\([^()\s]*(?:\s+"[^"]*")?\)|(?<=^|\n)[ \t]*(?:#{1,6}[ \t]+|[-*+][ \t]+|\d{1,9}[.)][ \t]+|>[ \t]?)|\*\*?|__|`+|(?<=^|\n)[ \t]*(?:[-*_][ \t]*){3,}(?=\n|$)/g;

/**
 * Plain text of a Markdown body, whitespace collapsed, with `from[i]`: the offset in `source`
 * of each character of the text (so matches found in the source map onto it).
 */
export function flatten(source: string): { text: string; from: Int32Array } {
  const n = source.length;
  const drop = new Uint8Array(n + 1);
  for (const m of source.matchAll(MARKUP)) drop.fill(1, m.index, m.index + m[0].length);
  // Character codes and offsets in typed arrays, one string at the end: a string and an array
  // grown a character at a time were most of a search answer's highlighting cost.
  const codes = new Uint16Array(n);
  const from = new Int32Array(n);
  let length = 0;
  let space = true;
  for (let i = 0; i < n; i++) {
    const c = source.charCodeAt(i);
    if (drop[i] === 1) {
      // A tag between two words still separates them.
      if (!space && c === 60 /* < */) {
        codes[length] = 32;
        from[length++] = i;
        space = true;
      }
      continue;
    }
    if (isSpaceCode(c)) {
      if (space) continue;
      codes[length] = 32;
      from[length++] = i;
      space = true;
      continue;
    }
    codes[length] = c;
    from[length++] = i;
    space = false;
  }
  if (length > 0 && codes[length - 1] === 32) length--;
  return { text: stringOf(codes, length), from: from.slice(0, length) };
}

/** What `\s` matches in a JavaScript regular expression (ECMAScript WhiteSpace and LineTerminator). */
function isSpaceCode(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

const UTF16 = new TextDecoder('utf-16le');

/** The string of the first `length` UTF-16 code units, exactly (surrogates included). */
function stringOf(codes: Uint16Array, length: number): string {
  const text = UTF16.decode(codes.subarray(0, length));
  if (text.length === length && !text.includes('\ufffd')) return text;
  // A lone surrogate (never in text read from SQLite) or a real U+FFFD: code unit by code unit.
  let exact = '';
  for (let i = 0; i < length; i++) exact += String.fromCharCode(codes[i]!);
  return exact;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}
