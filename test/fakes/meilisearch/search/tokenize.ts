/**
 * A stand-in for charabia, the engine's tokenizer, as Meilisearch 1.16 and later use it
 * (charabia 0.9.6–0.9.9), for documents and queries alike:
 *
 * 1. Script groups (`segmenter/mod.rs`, `SegmentedStrIter::new`): the text is cut where the
 *    script changes; characters of no script (digits, spaces, punctuation) join the group before
 *    them, so `采用5G技术` is `采用5` (Chinese) + `G` (Latin) + `技术` (Chinese), and `于 2024 年`
 *    one Chinese group. Only text at the very start lets digits join the group after them.
 * 2. Separators (`separators.rs`) cut each group; a piece made only of digits and ASCII
 *    punctuation (`maybe_number`) is kept whole and not segmented.
 * 3. Chinese pieces are cut by jieba without HMM (`segmenter/chinese.rs`), then every word longer
 *    than 2 characters is cut again into dictionary bigrams, else trigrams, else single
 *    characters (`cut_for_search`, since 0.9.4): 激光器 is 激光 + 器, 激光雷达 激光 + 雷达.
 *    Before charabia 0.9.8 (Meilisearch 1.24 and older) that re-cut also splits ASCII words
 *    jieba kept whole: `于2024年` is 于 / 2 / 0 / 2 / 4 / 年; from 0.9.8 on, 于 / 2024 / 年.
 * 4. Words are lowercased and accents folded; positions follow milli's `process_tokens`: the
 *    next word is 1 further, or 8 after a hard separator (`. `, `, `, `!`, `?`, `;`, `。`, `，`…).
 *
 * Kana (Japanese, which charabia cuts with lindera) is cut by ICU here; nothing in this project
 * indexes Japanese. Latin camelCase splitting and Chinese variant normalization are not modelled.
 */
import { Jieba } from '@node-rs/jieba';
import { dict } from '@node-rs/jieba/dict.js';

const jieba = Jieba.withDict(dict);

/**
 * charabia's `JIEBA.has_word`, for the 2- and 3-character grams of the re-cut. jieba's full
 * mode lists every dictionary word inside a text, so a gram is a word when it lists the gram
 * itself. It lists ASCII runs whole whatever the dictionary says; the dictionary holds no ASCII
 * word of 2 or 3 characters.
 */
function hasWord(gram: string): boolean {
  return !/^[A-Za-z0-9]+$/.test(gram) && jieba.cutAll(gram).includes(gram);
}

/** How a given engine version tokenizes, where versions differ. */
export interface TokenizerMode {
  /** charabia 0.9.8+ (Meilisearch 1.25+): ASCII letters and digits jieba kept together are not re-cut. */
  keepAsciiWords: boolean;
}

export const CURRENT_MODE: TokenizerMode = { keepAsciiWords: true };

/** The tokenizer of a Meilisearch version (`1.24.0` and older re-cut `2024` into digits). */
export function tokenizerMode(version: string): TokenizerMode {
  const [major = 0, minor = 0] = version.split(/[.-]/).map(Number);
  return { keepAsciiWords: major > 1 || (major === 1 && minor >= 25) };
}

type Script = 'cj' | 'latin' | 'other' | string;

const CJ_CHAR = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
const KANA = /[\p{Script=Hiragana}\p{Script=Katakana}\u30FC]/u;
const LETTER = /\p{L}/u;
const SCRIPT_NAMES = ['Cyrillic', 'Arabic', 'Devanagari', 'Hebrew', 'Ethiopic', 'Georgian', 'Bengali', 'Hangul', 'Greek', 'Thai', 'Khmer'];

const SCRIPTS = SCRIPT_NAMES.map((name) => [name, new RegExp(`\\p{Script=${name}}`, 'u')] as const);

/** charabia's `Script::from(char)`, reduced to the scripts that matter here. */
function scriptOf(c: string): Script {
  const code = c.codePointAt(0) as number;
  if (code < 0x80) return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) ? 'latin' : 'other';
  // charabia's is_latin takes U+0080..U+024F whole, symbols (`«`, `×`) included.
  if (code <= 0x24f || (code >= 0x1e00 && code <= 0x1eff)) return 'latin';
  if (!LETTER.test(c)) return 'other';
  if (CJ_CHAR.test(c) || (code >= 0x3040 && code <= 0x30ff)) return 'cj';
  for (const [name, re] of SCRIPTS) if (re.test(c)) return name;
  return 'other';
}

/** Text cut where the script changes; script-less characters join the group before them. */
function scriptGroups(text: string): { text: string; start: number; script: Script }[] {
  const groups: { text: string; start: number; script: Script }[] = [];
  let current: Script = 'other';
  let start = 0;
  let offset = 0;
  for (const c of text) {
    const script = scriptOf(c);
    if (script !== 'other' && script !== current) {
      if (current !== 'other') {
        groups.push({ text: text.slice(start, offset), start, script: current });
        start = offset;
      }
      current = script;
    }
    offset += c.length;
  }
  if (offset > start) groups.push({ text: text.slice(start), start, script: current });
  return groups;
}

// charabia's DEFAULT_SEPARATORS are the Unicode punctuation, space and math-symbol categories,
// plus `. ` and `, ` (matched first, leftmost-longest), and a few others (`+`, backtick).
const SEPARATOR = /\. |, |[\p{P}\p{Z}\p{Sm}\s`\0]/gu;
// CONTEXT_SEPARATORS: hard separators (the next word is 8 positions further).
const HARD = new Set(['. ', ', ', '!', ';', '?', '¡', '§', '¶', '¿', ';', '…', '‼', '、', '。', '！', '，', '．', '：', '；', '？', '｡', '､', '\0']);

/** charabia's `maybe_number`: kept whole, never segmented. */
const maybeNumber = (piece: string) => /^[\p{N}!-/:-@[-`{-~]+$/u.test(piece);

const icu = new Intl.Segmenter('zh', { granularity: 'word' });

function nextGram(s: string, n: number): string | undefined {
  const chars = [...s];
  return chars.length >= n ? chars.slice(0, n).join('') : undefined;
}

/** charabia's `cut_for_search`: a jieba word longer than 2 characters, cut again. */
function recut(word: string, mode: TokenizerMode): string[] {
  const chars = [...word];
  if (chars.length <= 2) return [word];
  if (mode.keepAsciiWords && /^[A-Za-z0-9]+$/.test(word)) return [word];
  const out: string[] = [];
  let rest = word;
  while (rest.length > 0) {
    const bigram = nextGram(rest, 2);
    const trigram = nextGram(rest, 3);
    const piece = bigram && hasWord(bigram) ? bigram : trigram && hasWord(trigram) ? trigram : ([...rest][0] as string);
    out.push(piece);
    rest = rest.slice(piece.length);
  }
  return out;
}

/** The Chinese segmenter: jieba without HMM, then the re-cut. */
export function segmentChinese(text: string, mode: TokenizerMode = CURRENT_MODE): string[] {
  return jieba.cut(text, false).flatMap((word) => recut(word, mode));
}

export const isCjk = (word: string): boolean => CJ_CHAR.test(word) || KANA.test(word);

/** Lowercase and fold accents (é -> e) on non-CJK text, as charabia's normalizers do for Latin scripts. */
export function normalizeWord(word: string): string {
  return word.normalize('NFKD').replace(/\p{Mn}/gu, '').normalize('NFC').toLowerCase();
}

export interface Token {
  word: string;
  /** Offset in UTF-16 units in the source string, for highlighting. */
  start: number;
  end: number;
  /** Word position as milli counts it: +1 per word, +8 after a hard separator. */
  position: number;
}

function segmentPiece(piece: string, script: Script, mode: TokenizerMode): { text: string; offset: number }[] {
  if (maybeNumber(piece) || script !== 'cj') return [{ text: piece, offset: 0 }];
  if (KANA.test(piece)) {
    return [...icu.segment(piece)].filter((s) => s.isWordLike !== false).map((s) => ({ text: s.segment, offset: s.index }));
  }
  const out: { text: string; offset: number }[] = [];
  let offset = 0;
  for (const word of jieba.cut(piece, false)) {
    for (const part of recut(word, mode)) {
      out.push({ text: part, offset });
      offset += part.length;
    }
  }
  return out;
}

export function tokenize(text: string, mode: TokenizerMode = CURRENT_MODE): Token[] {
  const out: Token[] = [];
  let position = -1;
  let hardBefore = false;
  for (const group of scriptGroups(text)) {
    let last = 0;
    const pieces: { text: string; start: number }[] = [];
    const separators: { at: number; hard: boolean }[] = [];
    for (const m of group.text.matchAll(SEPARATOR)) {
      const at = m.index ?? 0;
      if (at > last) pieces.push({ text: group.text.slice(last, at), start: last });
      separators.push({ at, hard: HARD.has(m[0]) });
      last = at + m[0].length;
    }
    if (last < group.text.length) pieces.push({ text: group.text.slice(last), start: last });
    let s = 0;
    for (const piece of pieces) {
      for (; s < separators.length && (separators[s] as { at: number }).at < piece.start; s++) {
        if ((separators[s] as { hard: boolean }).hard) hardBefore = true;
      }
      for (const seg of segmentPiece(piece.text, group.script, mode)) {
        const word = isCjk(seg.text) ? seg.text : normalizeWord(seg.text);
        if (word === '') continue;
        position = position < 0 ? 0 : position + (hardBefore ? 8 : 1);
        hardBefore = false;
        const start = group.start + piece.start + seg.offset;
        out.push({ word, start, end: start + seg.text.length, position });
      }
    }
    for (; s < separators.length; s++) if ((separators[s] as { hard: boolean }).hard) hardBefore = true;
  }
  return out;
}

export const words = (text: string, mode: TokenizerMode = CURRENT_MODE): string[] => tokenize(text, mode).map((t) => t.word);

export type QueryTerm =
  | { kind: 'word'; word: string; prefix: boolean; cjk: boolean; position: number }
  | { kind: 'phrase'; words: string[]; position: number };

export interface ParsedQuery {
  terms: QueryTerm[];
  /** Words and phrases after `-`: documents containing them are excluded. */
  negatives: string[][];
}

/** The engine only considers the first ten query words. */
const MAX_QUERY_WORDS = 10;

/**
 * Splits `q` into terms: `"quoted phrases"` (an unclosed quote runs to the end), `-negated`
 * words or phrases, and words. The whole query is tokenized at once, as the engine does, so
 * script groups span spaces (`采用 5G` is 采用 / 5 / g). Only the final word is a prefix, and not
 * when the query ends with a separator (`"laser "` looks for the whole word `laser`). Chinese
 * counts after the re-cut: `激光器` is two of the ten words.
 */
export function parseQuery(q: string, mode: TokenizerMode = CURRENT_MODE): ParsedQuery {
  const terms: QueryTerm[] = [];
  const negatives: string[][] = [];
  const quotes: [number, number][] = [];
  for (let i = 0, open = -1; i <= q.length; i++) {
    if (i === q.length) {
      if (open >= 0) quotes.push([open, q.length]);
    } else if (q[i] === '"') {
      if (open < 0) open = i;
      else {
        quotes.push([open, i]);
        open = -1;
      }
    }
  }
  const negatedAt = (at: number) => at > 0 && q[at - 1] === '-' && (at === 1 || /\s/.test(q[at - 2] as string));
  let count = 0;
  let endsWithWord = false;
  let dropped = false;
  let phrase: { quote: number; words: string[]; negated: boolean } | undefined;
  const flush = () => {
    if (!phrase) return;
    if (phrase.negated) negatives.push(phrase.words);
    else terms.push({ kind: 'phrase', words: phrase.words, position: count });
    count += 1;
    phrase = undefined;
  };
  for (const tok of tokenize(q, mode)) {
    const quote = quotes.findIndex(([a, b]) => tok.start > a && tok.start < b);
    if (phrase && phrase.quote !== quote) flush();
    if (count >= MAX_QUERY_WORDS) {
      dropped = true;
      break;
    }
    if (quote >= 0) {
      const [a] = quotes[quote] as [number, number];
      phrase ??= { quote, words: [], negated: negatedAt(a) };
      phrase.words.push(tok.word);
      endsWithWord = false;
      continue;
    }
    const negated = negatedAt(tok.start);
    if (negated) negatives.push([tok.word]);
    else terms.push({ kind: 'word', word: tok.word, prefix: false, cjk: isCjk(tok.word), position: count });
    count += 1;
    endsWithWord = !negated;
  }
  if (count < MAX_QUERY_WORDS) flush();
  else if (phrase) dropped = true;
  const last = terms[terms.length - 1];
  const endsWithSeparator = !/[\p{L}\p{N}\p{M}]$/u.test(q);
  if (last?.kind === 'word' && endsWithWord && !dropped && !endsWithSeparator) last.prefix = true;
  return { terms, negatives };
}
