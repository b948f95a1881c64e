import { segmentForIndex } from './segment.js';

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

const segmenter = new Intl.Segmenter('zh', { granularity: 'word' });
const HAN = /^\p{Script=Han}+$/u;

/**
 * The one normalisation of `q`, shared by both engines so that the same `q` means the same
 * thing on each. Text is split into words as it is indexed (Chinese segmented into words,
 * everything else on spaces and punctuation), so operators such as `-word`, `"phrase"`,
 * `NEAR(`, `*` or `AND` become plain words or disappear. Chinese written without spaces stays
 * one word (`飞秒激光` is one word even when the segmenter splits it into 飞 / 秒 / 激光): its
 * parts must match together, in order. One-character words are dropped: as prefixes they match
 * most of the corpus and cost the most while meaning the least. Parts of words count toward the
 * limit of ten. A query left with no word matches nothing (never "everything", as an empty
 * query would in Meilisearch).
 */
export function normalizeQuery(q: string): NormalizedQuery {
  const candidates: string[] = [];
  let hanRunEnd = -1;
  for (const s of segmenter.segment(q)) {
    if (!s.isWordLike) continue;
    const word = s.segment.toLowerCase();
    const han = HAN.test(word);
    if (han && s.index === hanRunEnd) candidates[candidates.length - 1] += word;
    else candidates.push(word);
    hanRunEnd = han ? s.index + s.segment.length : -1;
  }
  const words: string[] = [];
  const seen = new Set<string>();
  let parts = 0;
  for (const word of candidates) {
    if ([...word].length < 2 || seen.has(word)) continue;
    const size = wordParts(word).length;
    if (parts + size > MAX_QUERY_WORDS) break;
    seen.add(word);
    words.push(word);
    parts += size;
  }
  return { words, text: words.join(' '), dropped: candidates.length - words.length };
}

/** The tokens a word is indexed as: one, or several for Chinese the segmenter splits. */
export function wordParts(word: string): string[] {
  return segmentForIndex(word).split(' ').filter(Boolean);
}
