import type { NormalizedQuery } from '../normalize.js';

// The segmentation normalizeQuery uses (src/search/segment.ts), with the positions it drops.
const segmenter = new Intl.Segmenter('zh', { granularity: 'word' });
const HAN = /^\p{Script=Han}+$/u;

/**
 * The `q` sent to Meilisearch: the normalised words, in order, separated by spaces, except
 * that Chinese words that were written together stay together. Meilisearch segments Chinese
 * with jieba (charabia), not ICU: `飞秒` is one jieba word in the documents but two ICU words;
 * sent as `飞 秒`, neither would match. Written together, the engine cuts the query as it cut
 * the documents. No operator survives: the words come from normalizeQuery.
 */
export function meiliQueryText(q: string, normalized: NormalizedQuery): string {
  const keep = new Set(normalized.words);
  const used = new Set<string>();
  const out: string[] = [];
  let previousEnd = -1;
  let previousHan = false;
  for (const s of segmenter.segment(q)) {
    if (!s.isWordLike) continue;
    const word = s.segment.toLowerCase();
    if (!keep.has(word) || used.has(word)) {
      previousEnd = -1;
      continue;
    }
    used.add(word);
    const han = HAN.test(word);
    if (han && previousHan && s.index === previousEnd && out.length > 0) out[out.length - 1] += word;
    else out.push(word);
    previousEnd = s.index + s.segment.length;
    previousHan = han;
  }
  // Never an empty q (Meilisearch's placeholder search finds everything): should the words
  // ever differ from what this segmentation finds, send them as normalizeQuery joined them.
  return used.size === keep.size ? out.join(' ') : normalized.text;
}
