import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { segmentForIndex } from '../../../src/search/segment.js';

// The earlier form, one ICU call per run of Chinese characters: the index's text must not
// change with the one call per text that replaced it (it costs less memory).
const segmenter = new Intl.Segmenter('zh', { granularity: 'word' });
function segmentRunByRun(text: string): string {
  return text.replace(/\p{Script=Han}+/gu, (run) => {
    let out = ' ';
    for (const s of segmenter.segment(run)) out += s.segment + ' ';
    return out;
  });
}

const PIECES = [
  ...'激光器光纤飞秒材料加工中的应用研究人员发布于年报告市场半导体传感〇々〆北京大学生',
  '𠀀', '𪚥', ...'カタカナひらがなーア한국어abcXYZ 019，。、！？「」()-\'".,:;\n\t', '😀', '\u200b', '\u3000', '２０２４',
];

describe('segmentForIndex', () => {
  it('splits each run of Chinese characters into words and leaves the rest alone', () => {
    expect(segmentForIndex('光纤激光器，2024年发布 fiber')).toBe(segmentRunByRun('光纤激光器，2024年发布 fiber'));
    expect(segmentForIndex('fiber lasers')).toBe('fiber lasers');
    expect(segmentForIndex('')).toBe('');
  });

  it('gives the text that segmenting run by run gave', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 60 }), (pieces) => {
        const text = pieces.join('');
        expect(segmentForIndex(text)).toBe(segmentRunByRun(text));
      }),
      { numRuns: 2000 },
    );
  });
});
