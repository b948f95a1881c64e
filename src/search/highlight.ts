import { escapeHtml, flatten } from './flatten-markdown.js';
import { codePointAt, HAN, hanLengthAt, hanLengthBefore, isLowSurrogate } from './han-text.js';
import { wordParts } from './normalize.js';

// Kept importable from here, where the highlighting's callers and tests look for them.
export { escapeHtml, flatten } from './flatten-markdown.js';

/*
 * Where a search hit matched, computed from the stored text of the hit after the engine has
 * returned its ids. Both engines go through here, so the same hit gives the same highlights on
 * SQLite and on Meilisearch; and the rule is the embedded engine's own (the rule both engines are
 * configured to follow): a query word matches a token of the text that starts with it, after
 * the text is split into tokens as the index splits it (Chinese runs segmented by ICU into
 * words, everything else on what is not a letter, digit or mark), case and diacritics folded.
 * A Chinese query word indexed as several tokens matches those tokens in a row.
 *
 * The Markdown-to-text side is in flatten-markdown.ts, reading Chinese text a character at a
 * time in han-text.ts. What remains (about 370 lines) is one
 * piece on purpose: the token rules, the match finders (ASCII, Chinese, general) and the
 * excerpt's window and rendering share the Match type and the offsets they agree on, and a
 * split would spread one matching rule over several files.
 */

/** One marked word: offsets in Unicode code points into `text`. */
export interface HighlightMatch {
  start: number;
  length: number;
  /** The normalised query word this occurrence matched (a whole word or its start). */
  word: string;
}

export interface HighlightedText {
  /** Plain text (no markup of ours; the body excerpt has its Markdown flattened and HTML tags removed). */
  text: string;
  /** `text` HTML-escaped, each match wrapped in `<mark>`…`</mark>`: safe to insert as HTML. */
  html: string;
  matches: HighlightMatch[];
}

export interface Highlights {
  title: HighlightedText;
  body: HighlightedText;
}

/** About how long a body excerpt is, in UTF-16 code units (Chinese: characters). */
export const SNIPPET_LENGTH = 200;
/** How much of the text before the first match the excerpt shows, when it can. */
const LEAD = 40;
const ELLIPSIS = '…';
/** Matches looked at when choosing the excerpt: enough for any 200 characters. */
const MAX_MATCHES = 400;

// A Chinese run, or a run of token characters (letters, digits, marks, private use) outside one.
const TOKEN = /(\p{Script=Han}+)|((?:(?!\p{Script=Han})[\p{L}\p{N}\p{M}\p{Co}])+)/gu;
const WORD_CHAR = /[\p{L}\p{N}\p{M}\p{Co}]/u;
const segmenter = new Intl.Segmenter('zh', { granularity: 'word' });

/** What the index compares: lowercased, diacritics removed (FTS5 unicode61 remove_diacritics 2). */
export function fold(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

interface Token {
  start: number;
  end: number;
  folded: string;
}

const ASCII = /^[\x00-\x7f]*$/;

/**
 * The tokens of `text`. A Chinese run holding none of `hanStarts` (the first characters of the
 * query's Chinese words) cannot match and is not segmented: segmenting is most of the cost.
 */
function tokens(text: string, hanStarts?: ReadonlySet<string>): Token[] {
  const out: Token[] = [];
  for (const m of text.matchAll(TOKEN)) {
    const at = m.index;
    if (m[1] !== undefined) {
      if (hanStarts && ![...hanStarts].some((c) => m[1]!.includes(c))) continue;
      for (const s of segmenter.segment(m[1])) out.push({ start: at + s.index, end: at + s.index + s.segment.length, folded: s.segment });
    } else {
      out.push({ start: at, end: at + m[0].length, folded: ASCII.test(m[0]) ? m[0].toLowerCase() : fold(m[0]) });
    }
  }
  return out;
}

/** A query word as the tokens it must match: all but the last exactly, the last as a prefix. */
export interface QueryWord {
  word: string;
  parts: string[];
}

export function queryWordsOf(words: readonly string[]): QueryWord[] {
  return words.map((word) => ({ word, parts: wordParts(word).map(fold) })).filter((w) => w.parts.length > 0);
}

interface Match {
  start: number;
  end: number;
  word: number;
}

/** Every match of the query words in `text` (UTF-16 offsets), in text order, overlaps resolved to the first. */
function findMatches(text: string, words: readonly QueryWord[], limit = Number.POSITIVE_INFINITY): Match[] {
  if (words.every((w) => w.parts.length === 1 && ASCII.test(w.parts[0]!)) && ASCII.test(text)) return findAsciiMatches(text, words, limit);
  if (words.every((w) => w.parts.length === 1 && HAN_WORD.test(w.parts[0]!))) return findHanMatches(text, words, limit);
  // First characters as code points: charAt(0) of a character outside the BMP (𠀀) is half of it.
  const hanStarts = new Set(words.flatMap((w) => codePointAt(w.parts[0]!, 0) ?? []).filter((c) => HAN.test(c)));
  const toks = tokens(text, hanStarts);
  const out: Match[] = [];
  for (let i = 0; i < toks.length && out.length < limit; i++) {
    for (let w = 0; w < words.length; w++) {
      const parts = words[w]!.parts;
      const last = parts.length - 1;
      if (i + last >= toks.length) continue;
      let ok = true;
      for (let p = 0; p < last && ok; p++) ok = toks[i + p]!.folded === parts[p];
      if (!ok || !toks[i + last]!.folded.startsWith(parts[last]!)) continue;
      out.push({ start: toks[i]!.start, end: toks[i + last]!.end, word: w });
      i += last;
      break;
    }
  }
  return out;
}

/** An ASCII letter or digit: what a token is made of in ASCII text. */
function isAsciiWordCode(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/**
 * findMatches for ASCII text and one-token ASCII words (most English hits): the same matches,
 * found with indexOf on the lowercased text instead of tokenizing all of it (tokenizing was
 * most of a search answer's highlighting cost). A word matches where a token starts with it.
 */
function findAsciiMatches(text: string, words: readonly QueryWord[], limit: number): Match[] {
  const lower = text.toLowerCase();
  // Token start -> the first query word (in query order) it starts with.
  const at = new Map<number, number>();
  for (let w = 0; w < words.length; w++) {
    const part = words[w]!.parts[0]!;
    if (part.length === 0) continue;
    for (let i = lower.indexOf(part); i !== -1; i = lower.indexOf(part, i + 1)) {
      if (i > 0 && isAsciiWordCode(lower.charCodeAt(i - 1))) continue;
      if (!at.has(i)) at.set(i, w);
    }
  }
  const starts = [...at.keys()].sort((a, b) => a - b);
  const out: Match[] = [];
  for (const start of starts) {
    if (out.length >= limit) break;
    let end = start;
    while (end < lower.length && isAsciiWordCode(lower.charCodeAt(end))) end++;
    out.push({ start, end, word: at.get(start)! });
  }
  return out;
}

const HAN_WORD = /^\p{Script=Han}+$/u;

/**
 * findMatches for one-token Chinese words (most Chinese queries): the same matches, found with
 * indexOf, segmenting only the Chinese runs where a word occurs. A Chinese word only matches
 * tokens of a Chinese run, and it matches where a token of its run starts with it; tokenizing
 * every run that held a word's first character (in laser articles, 光 of 激光 is in most)
 * was most of a Chinese search answer's highlighting cost.
 */
function findHanMatches(text: string, words: readonly QueryWord[], limit: number): Match[] {
  // Where each word occurs, then the Chinese runs around those places, segmented together.
  const occurrences = words.map((w) => {
    const part = w.parts[0]!;
    const found: number[] = [];
    for (let i = text.indexOf(part); i !== -1; i = text.indexOf(part, i + 1)) found.push(i);
    return found;
  });
  const ends = hanTokenEnds(text, occurrences.flat());
  // Token start -> its end and the first query word (in query order) it starts with.
  const at = new Map<number, { end: number; word: number }>();
  for (let w = 0; w < words.length; w++) {
    const length = words[w]!.parts[0]!.length;
    for (const i of occurrences[w]!) {
      if (at.has(i)) continue;
      const end = ends.get(i);
      // A token starting here that holds the word: shorter, the word runs past it.
      if (end !== undefined && end - i >= length) at.set(i, { end, word: w });
    }
  }
  const starts = [...at.keys()].sort((a, b) => a - b);
  const out: Match[] = [];
  for (const start of starts) {
    if (out.length >= limit) break;
    const { end, word } = at.get(start)!;
    out.push({ start, end, word });
  }
  return out;
}

/**
 * The tokens (start -> end) of the Chinese runs around the offsets `near`, as tokens() splits
 * them: each run segmented alone, but all in one call to ICU, joined by spaces (a space always
 * ends a word, so each run splits as it would alone; src/search/segment.ts does the same for
 * the index). A call per run was most of a Chinese answer's highlighting time, and each call
 * holds ICU memory outside V8's heap until a full collection.
 */
function hanTokenEnds(text: string, near: readonly number[]): Map<number, number> {
  const runs: { start: number; end: number }[] = [];
  const seen = new Set<number>();
  for (const i of near) {
    // Inside a run already found: walking it again would find its start again.
    if (runs.some((run) => i >= run.start && i < run.end)) continue;
    let start = i;
    for (let before = hanLengthBefore(text, start); before > 0; before = hanLengthBefore(text, start)) start -= before;
    if (seen.has(start)) continue;
    seen.add(start);
    let end = i;
    for (let at = hanLengthAt(text, end); at > 0; at = hanLengthAt(text, end)) end += at;
    if (end > start) runs.push({ start, end });
  }
  const ends = new Map<number, number>();
  if (runs.length === 0) return ends;
  // Where each run starts in the joined text, in order.
  const joinedAt: number[] = [];
  let joined = '';
  for (const run of runs) {
    if (joined.length > 0) joined += ' ';
    joinedAt.push(joined.length);
    joined += text.slice(run.start, run.end);
  }
  let r = 0;
  for (const s of segmenter.segment(joined)) {
    if (s.segment === ' ') continue;
    while (r + 1 < runs.length && joinedAt[r + 1]! <= s.index) r++;
    const at = runs[r]!.start + (s.index - joinedAt[r]!);
    ends.set(at, at + s.segment.length);
  }
  return ends;
}

function codePoints(text: string, end: number): number {
  let n = 0;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    // The high half of a surrogate pair counts; the low half does not.
    if (c < 0xdc00 || c > 0xdfff) n += 1;
  }
  return n;
}

function render(text: string, matches: Match[], words: readonly QueryWord[]): HighlightedText {
  let html = '';
  let at = 0;
  const out: HighlightMatch[] = [];
  let cp = 0;
  let cpAt = 0;
  for (const m of matches) {
    html += escapeHtml(text.slice(at, m.start)) + '<mark>' + escapeHtml(text.slice(m.start, m.end)) + '</mark>';
    cp += codePoints(text.slice(cpAt, m.start), m.start - cpAt);
    const length = codePoints(text.slice(m.start, m.end), m.end - m.start);
    out.push({ start: cp, length, word: words[m.word]!.word });
    cp += length;
    cpAt = m.end;
    at = m.end;
  }
  html += escapeHtml(text.slice(at));
  return { text, html, matches: out };
}

const isWordChar = (c: string | undefined) => c !== undefined && WORD_CHAR.test(c) && !HAN.test(c);

/** The start of the excerpt: the match group's start less LEAD, moved forward onto a word's start. */
function cutStart(text: string, at: number, limit: number): number {
  let start = Math.max(0, at - LEAD);
  if (start === 0) return 0;
  // Inside a word (not Chinese: any character boundary there is a cut point): go to its end.
  while (start < limit && isWordChar(text[start - 1]) && isWordChar(text[start])) start++;
  while (start < limit && text[start] === ' ') start++;
  if (isLowSurrogate(text.charCodeAt(start))) start++;
  return start;
}

/** The end of the excerpt: at most `end`, moved back onto a word's end, never before `keep`. */
function cutEnd(text: string, end: number, keep: number): number {
  if (end >= text.length) return text.length;
  let cut = end;
  while (cut > keep && isWordChar(text[cut - 1]) && isWordChar(text[cut])) cut--;
  while (cut > keep && text[cut - 1] === ' ') cut--;
  if (isLowSurrogate(text.charCodeAt(cut))) cut--;
  return cut;
}

/**
 * The stretch of about SNIPPET_LENGTH characters holding the most distinct query words (then
 * the most matches, then the earliest), as [start, end); the start of the text without matches.
 */
function bestWindow(text: string, matches: Match[]): [number, number] {
  if (matches.length === 0) return [0, cutEnd(text, SNIPPET_LENGTH, 0)];
  let best = 0;
  let bestDistinct = 0;
  let bestCount = 0;
  // The query words seen in the window starting at match i: seenAt[word] === i (one array for
  // all windows instead of a Set per window).
  const seenAt: number[] = [];
  for (let i = 0; i < matches.length; i++) {
    const limit = matches[i]!.start + SNIPPET_LENGTH - LEAD;
    let distinct = 0;
    let count = 0;
    for (let j = i; j < matches.length && matches[j]!.end <= limit; j++) {
      const word = matches[j]!.word;
      if (seenAt[word] !== i) {
        seenAt[word] = i;
        distinct++;
      }
      count++;
    }
    if (distinct > bestDistinct || (distinct === bestDistinct && count > bestCount)) {
      best = i;
      bestDistinct = distinct;
      bestCount = count;
    }
  }
  const first = matches[best]!;
  let start = cutStart(text, first.start, first.start);
  // Near the end of the text, show more of what comes before instead of a short excerpt.
  if (text.length - start < SNIPPET_LENGTH) start = cutStart(text, Math.max(0, text.length - SNIPPET_LENGTH) + LEAD, first.start);
  return [start, cutEnd(text, start + SNIPPET_LENGTH, first.end)];
}

/** Where the character at `offset` of the source is in the text (`from` ascending), or -1 when flatten left it out. */
function textOffset(from: Int32Array, offset: number): number {
  let low = 0;
  let high = from.length - 1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    const at = from[mid]!;
    if (at === offset) return mid;
    if (at < offset) low = mid + 1;
    else high = mid - 1;
  }
  return -1;
}

/** Highlights of the title (whole) and of the best excerpt of the body, for the query words. */
export function highlight(article: { title: string; body: string }, words: readonly QueryWord[]): Highlights {
  const title = render(article.title, findMatches(article.title, words), words);

  const { text, from } = flatten(article.body);
  // Matches found in the source, onto the text: one whose characters were all kept maps exactly.
  // A search per match: a hit has a few, and a map over the whole body cost more than finding them.
  const matches: Match[] = [];
  for (const m of findMatches(article.body, words, MAX_MATCHES)) {
    const start = textOffset(from, m.start);
    const last = textOffset(from, m.end - 1);
    if (start >= 0 && last >= start) matches.push({ start, end: last + 1, word: m.word });
  }
  const [start, end] = bestWindow(text, matches);
  const lead = start > 0 ? ELLIPSIS : '';
  const tail = end < text.length ? ELLIPSIS : '';
  const shown = matches
    .filter((m) => m.start >= start && m.end <= end)
    .map((m) => ({ ...m, start: m.start - start + lead.length, end: m.end - start + lead.length }));
  const body = render(lead + text.slice(start, end) + tail, shown, words);
  return { title, body };
}

