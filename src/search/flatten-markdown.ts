/*
 * The text side of highlighting: a Markdown body flattened to the plain text a partner sees in
 * a search excerpt, with the offset map that puts matches found in the source onto that text,
 * and HTML escaping. Kept apart from highlight.ts, which finds and marks the query's words.
 */

// Markdown and HTML that a plain-text excerpt leaves out: tags and comments, images and link
// targets (their text stays), heading, list and quote markers, emphasis and code marks.
// Sticky: flatten tries it only where one of its alternatives can start (a character of
// mayStartMarkup, or a line's start), and finds the matches a global scan finds, since no
// alternative can start anywhere else (test/unit/search/highlight.test.ts compares both).
// Scanning the whole body tried every alternative at every character: half of a search
// answer's highlighting cost.
const MARKUP =
  /<!--[\s\S]*?(?:-->|$)|<\/?[A-Za-z][^<>]*>|!?\[(?=[^[\]\n]*\]\()|\]\([^()\s]*(?:\s+"[^"]*")?\)|(?<=^|\n)[ \t]*(?:#{1,6}[ \t]+|[-*+][ \t]+|\d{1,9}[.)][ \t]+|>[ \t]?)|\*\*?|__|`+|(?<=^|\n)[ \t]*(?:[-*_][ \t]*){3,}(?=\n|$)/y;

/** The characters an alternative of MARKUP starts with, apart from a line's start: < ! [ ] * _ ` */
function mayStartMarkup(c: number): boolean {
  return c === 60 || c === 33 || c === 91 || c === 93 || c === 42 || c === 95 || c === 96;
}

// Reused by every call (one body at a time per thread): typed arrays of a body's length, new
// for each hit, were allocated outside V8's heap for every body of every search page.
let codes = new Uint16Array(0);
let offsets = new Int32Array(0);

/**
 * Plain text of a Markdown body, whitespace collapsed, with `from[i]`: the offset in `source`
 * of each character of the text (so matches found in the source map onto it).
 */
export function flatten(source: string): { text: string; from: Int32Array } {
  const n = source.length;
  if (codes.length < n) {
    codes = new Uint16Array(Math.max(n, 2 * codes.length));
    offsets = new Int32Array(codes.length);
  }
  // Character codes and offsets in typed arrays, one string at the end: a string and an array
  // grown a character at a time were most of a search answer's highlighting cost.
  let length = 0;
  let space = true;
  let lineStart = true;
  let i = 0;
  while (i < n) {
    const c = source.charCodeAt(i);
    if (lineStart || mayStartMarkup(c)) {
      MARKUP.lastIndex = i;
      const end = MARKUP.test(source) ? MARKUP.lastIndex : i;
      if (end > i) {
        // Markup left out. A tag between two words still separates them.
        if (!space) {
          for (let j = i; j < end; j++) {
            if (source.charCodeAt(j) !== 60 /* < */) continue;
            codes[length] = 32;
            offsets[length++] = j;
            space = true;
            break;
          }
        }
        lineStart = source.charCodeAt(end - 1) === 10;
        i = end;
        continue;
      }
    }
    lineStart = c === 10;
    i++;
    if (isSpaceCode(c)) {
      if (space) continue;
      codes[length] = 32;
      offsets[length++] = i - 1;
      space = true;
      continue;
    }
    codes[length] = c;
    offsets[length++] = i - 1;
    space = false;
  }
  if (length > 0 && codes[length - 1] === 32) length--;
  return { text: stringOf(codes, length), from: offsets.slice(0, length) };
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
