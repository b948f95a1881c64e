/**
 * A small stand-in for charabia, the engine's tokenizer: lowercase, accents folded, split on
 * anything that is not a letter or digit, and runs of Han characters cut into words by jieba,
 * as charabia's Chinese segmenter does (`jieba.cut(text, false)`, no HMM: charabia
 * `segmenter/chinese.rs`). The same segmenter cuts documents and queries, so `激光` is a word
 * of `激光切割设备` but not of `光纤激光器` (jieba keeps `激光器` whole), and `激光雷达` is one
 * word: a query word matches a whole document word, or its beginning when it is the query's
 * last word (see matching.ts). Kana runs (Japanese, which charabia cuts with lindera) are cut
 * by ICU here; nothing in this project indexes Japanese.
 */
import { Jieba } from '@node-rs/jieba';
import { dict } from '@node-rs/jieba/dict.js';

const jieba = Jieba.withDict(dict);
const HAN_ONLY = /^\p{Script=Han}+$/u;

const CJK_CHAR = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u30FC]/u;
const WORD_RUN = /[\p{L}\p{N}\p{M}]+/gu;
const SCRIPT_RUNS = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u30FC]+|[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u30FC]+/gu;
const segmenter = new Intl.Segmenter('zh', { granularity: 'word' });

export const isCjk = (word: string): boolean => CJK_CHAR.test(word);

/** Lowercase and fold accents (é -> e) on non-CJK text, as charabia's normalizers do for Latin scripts. */
export function normalizeWord(word: string): string {
  return word.normalize('NFKD').replace(/\p{Mn}/gu, '').normalize('NFC').toLowerCase();
}

export interface Token {
  word: string;
  /** Offset in UTF-16 units in the source string, for highlighting. */
  start: number;
  end: number;
}

export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  for (const run of text.matchAll(WORD_RUN)) {
    const runStart = run.index ?? 0;
    for (const piece of run[0].matchAll(SCRIPT_RUNS)) {
      const pieceStart = runStart + (piece.index ?? 0);
      if (HAN_ONLY.test(piece[0])) {
        let offset = 0;
        for (const seg of jieba.cut(piece[0], false)) {
          out.push({ word: seg, start: pieceStart + offset, end: pieceStart + offset + seg.length });
          offset += seg.length;
        }
      } else if (isCjk(piece[0])) {
        for (const seg of segmenter.segment(piece[0])) {
          if (seg.isWordLike !== false) out.push({ word: seg.segment, start: pieceStart + seg.index, end: pieceStart + seg.index + seg.segment.length });
        }
      } else {
        const word = normalizeWord(piece[0]);
        if (word !== '') out.push({ word, start: pieceStart, end: pieceStart + piece[0].length });
      }
    }
  }
  return out;
}

export const words = (text: string): string[] => tokenize(text).map((t) => t.word);

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
 * words or phrases, and words. Only the final word is a prefix, and not when the query ends
 * with a separator (`"laser "` looks for the whole word `laser`).
 */
export function parseQuery(q: string): ParsedQuery {
  const terms: QueryTerm[] = [];
  const negatives: string[][] = [];
  let i = 0;
  let count = 0;
  // Whether the query's final token is a plain (non-negated) word: only that one may be a prefix.
  let endsWithWord = false;
  while (i < q.length && count < MAX_QUERY_WORDS) {
    const negated = q[i] === '-' && (i === 0 || /\s/.test(q[i - 1] as string)) && i + 1 < q.length && !/\s/.test(q[i + 1] as string);
    const at = negated ? i + 1 : i;
    if (q[at] === '"') {
      const close = q.indexOf('"', at + 1);
      const end = close === -1 ? q.length : close;
      const phrase = words(q.slice(at + 1, end));
      if (phrase.length > 0) {
        if (negated) negatives.push(phrase);
        else terms.push({ kind: 'phrase', words: phrase, position: count });
        count += 1;
        endsWithWord = false;
      }
      i = close === -1 ? q.length : close + 1;
      continue;
    }
    if (/\s/.test(q[i] as string)) {
      i++;
      continue;
    }
    let end = at;
    while (end < q.length && !/\s/.test(q[end] as string) && q[end] !== '"') end++;
    const chunk = tokenize(q.slice(at, end));
    chunk.forEach((tok, k) => {
      if (count >= MAX_QUERY_WORDS) {
        endsWithWord = false;
        return;
      }
      if (negated && k === 0) negatives.push([tok.word]);
      else terms.push({ kind: 'word', word: tok.word, prefix: false, cjk: isCjk(tok.word), position: count });
      count += 1;
      endsWithWord = !(negated && k === 0);
    });
    i = Math.max(end, at + 1);
  }
  if (q.slice(i).trim() !== '') endsWithWord = false; // words past the tenth were dropped
  const last = terms[terms.length - 1];
  const endsWithSeparator = !/[\p{L}\p{N}\p{M}]$/u.test(q);
  if (last?.kind === 'word' && endsWithWord && !endsWithSeparator) last.prefix = true;
  return { terms, negatives };
}
