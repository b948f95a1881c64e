// One segmenter for indexing and querying, so both split text the same way. ICU's dictionary
// segmentation finds Chinese words (激光, 光纤, 焊接) that FTS tokenizers cannot.
const segmenter = new Intl.Segmenter('zh', { granularity: 'word' });
const HAN_RUN = /\p{Script=Han}+/gu;

/**
 * Text ready for the FTS5 unicode61 tokenizer: runs of Chinese characters are split into
 * words separated by spaces; everything else is left alone (unicode61 already splits
 * alphabetic text on spaces and punctuation, and segmenting it would only cost time).
 */
export function segmentForIndex(text: string): string {
  return text.replace(HAN_RUN, (run) => {
    let out = ' ';
    for (const s of segmenter.segment(run)) out += s.segment + ' ';
    return out;
  });
}

/** The words of a search query, lowercased, punctuation dropped. */
export function queryWords(q: string): string[] {
  const words: string[] = [];
  for (const s of segmenter.segment(q)) {
    if (s.isWordLike) words.push(s.segment.toLowerCase());
  }
  return words;
}
