import { queryWords, segmentForIndex } from './segment.js';

// A single Chinese character is a word (飞秒 segments as 飞 + 秒): only other one-character
// words are dropped.
const HAN = /^\p{Script=Han}$/u;

/** Meilisearch ignores query words past the tenth; the embedded engine follows the same rule. */
export const MAX_QUERY_WORDS = 10;

/** What a partner's `q` means to every engine: the words that must all match. */
export interface NormalizedQuery {
  /** Distinct words, lowercased, in the order given, at most MAX_QUERY_WORDS. */
  words: string[];
  /** The words joined by spaces: a query string with no operator any engine could read. */
  text: string;
  /** Words left out: repeated, one character long, or past the tenth. */
  dropped: number;
}

/**
 * The one normalisation of `q`, shared by both engines so that the same `q` means the same
 * thing on each. Text is split into words as it is indexed (Chinese segmented into words,
 * everything else on spaces and punctuation), so operators such as `-word`, `"phrase"`,
 * `NEAR(`, `*` or `AND` become plain words or disappear. One-character words (but Chinese ones) are dropped:
 * as prefixes they match most of the corpus and cost the most while meaning the least. A
 * query left with no word matches nothing (never "everything", as an empty query would in
 * Meilisearch).
 */
export function normalizeQuery(q: string): NormalizedQuery {
  const words: string[] = [];
  const seen = new Set<string>();
  let total = 0;
  for (const word of queryWords(q)) {
    total += 1;
    if ((([...word].length < 2 && !HAN.test(word)) || seen.has(word)) || words.length >= MAX_QUERY_WORDS) continue;
    seen.add(word);
    words.push(word);
  }
  return { words, text: words.join(' '), dropped: total - words.length };
}

/** The tokens a word is indexed as: one, or several for a Chinese run the segmenter splits. */
export function wordParts(word: string): string[] {
  return segmentForIndex(word).split(' ').filter(Boolean);
}
