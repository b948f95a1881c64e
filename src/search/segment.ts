// One segmenter for indexing and querying, so both split text the same way. ICU's dictionary
// segmentation finds Chinese words (激光, 光纤, 焊接) that FTS tokenizers cannot.
const segmenter = new Intl.Segmenter('zh', { granularity: 'word' });
const HAN_RUN = /\p{Script=Han}+/gu;

/**
 * Text ready for the FTS5 unicode61 tokenizer: runs of Chinese characters are split into
 * words separated by spaces; everything else is left alone (unicode61 already splits
 * alphabetic text on spaces and punctuation, and segmenting it would only cost time).
 *
 * All the runs of a text go to ICU in one call, joined by spaces (a space always ends a word,
 * so each run splits as it would alone): each call holds a copy of ICU's break iterator
 * outside the V8 heap until a full collection, and one call per run (dozens per article)
 * grew a full sync's memory by about 50 MB at 10,000 Chinese articles
 * (docs/operations.md#the-sync-workers-memory).
 */
export function segmentForIndex(text: string): string {
  const runs = text.match(HAN_RUN);
  if (runs === null) return text;
  const segmented: string[] = [];
  let out = ' ';
  for (const s of segmenter.segment(runs.join(' '))) {
    if (s.segment === ' ') {
      segmented.push(out);
      out = ' ';
    } else {
      out += s.segment + ' ';
    }
  }
  segmented.push(out);
  let next = 0;
  return text.replace(HAN_RUN, () => segmented[next++]!);
}

/** The words of a search query, lowercased, punctuation dropped. */
export function queryWords(q: string): string[] {
  const words: string[] = [];
  for (const s of segmenter.segment(q)) {
    if (s.isWordLike) words.push(s.segment.toLowerCase());
  }
  return words;
}
