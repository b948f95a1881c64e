import { wordParts } from '../normalize.js';

/**
 * The FTS5 query for normalized words (src/search/normalize.ts): each word quoted, so no FTS5
 * syntax can be injected, and used as a prefix; all words required. A Chinese word indexed as
 * several tokens is a phrase: its tokens in order. Undefined without words.
 */
export function matchFor(words: readonly string[]): string | undefined {
  if (words.length === 0) return undefined;
  return words.map((w) => `"${wordParts(w).join(' ').replaceAll('"', '""')}"*`).join(' ');
}
