import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { flatten, highlight, queryWordsOf, SNIPPET_LENGTH, type HighlightedText } from '../../../src/search/highlight.js';
import { normalizeQuery } from '../../../src/search/normalize.js';

const words = (q: string) => queryWordsOf(normalizeQuery(q).words);
/** The marked stretches of a highlighted text, read back through the offsets (code points). */
const marked = (h: HighlightedText) => h.matches.map((m) => [...h.text].slice(m.start, m.start + m.length).join(''));
const filler = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

describe('highlights of a search hit', () => {
  it('marks whole words that start with a query word, and says which query word matched', () => {
    const h = highlight({ title: 'Fiber lasers cut Laser-grade steel', body: 'A lasered part. Fibre is not fiber.' }, words('las fiber'));
    expect(marked(h.title)).toEqual(['Fiber', 'lasers', 'Laser']);
    expect(h.title.matches.map((m) => m.word)).toEqual(['fiber', 'las', 'las']);
    expect(h.title.html).toBe('<mark>Fiber</mark> <mark>lasers</mark> cut <mark>Laser</mark>-grade steel');
    expect(marked(h.body)).toEqual(['lasered', 'fiber']);
  });

  it('folds case and diacritics as the index does', () => {
    const h = highlight({ title: 'Café Crème in Zürich', body: '' }, words('cafe zurich'));
    expect(marked(h.title)).toEqual(['Café', 'Zürich']);
  });

  it('cuts an excerpt of about 200 characters around the best match, at word boundaries', () => {
    const body = `${filler(80)} the best match: quantum cascade here. ${filler(80)} a lone quantum.`;
    const h = highlight({ title: 'Nothing', body }, words('quantum cascade'));
    const text = h.body.text;
    expect(text.length).toBeLessThanOrEqual(SNIPPET_LENGTH + 2);
    expect(text.length).toBeGreaterThan(SNIPPET_LENGTH - 20);
    expect(text.startsWith('…') && text.endsWith('…')).toBe(true);
    // Whole words only at both ends: every word of the excerpt is a word of the body.
    const bodyWords = new Set(body.split(/\s+/));
    for (const w of text.slice(1, -1).trim().split(/\s+/)) expect(bodyWords.has(w) || bodyWords.has(w.replace(/[.:]$/, '')) || w.endsWith(':') || w.endsWith('.'), w).toBe(true);
    expect(text).toContain('quantum cascade');
    expect(marked(h.body)).toEqual(['quantum', 'cascade']);
  });

  it('shows the start of the body, unmarked, when only another field matched', () => {
    const h = highlight({ title: 'Quantum dots', body: `${filler(100)}` }, words('quantum'));
    expect(h.body.matches).toEqual([]);
    expect(h.body.text.startsWith('word0 word1')).toBe(true);
    expect(h.body.text.endsWith('…')).toBe(true);
  });

  it('cuts Chinese at character boundaries and matches Chinese words as the index splits them', () => {
    const body = '华光科技推出高功率光纤，'.repeat(20) + '天宇光电发布激光器件，产线精度提升。' + '明辉光学交付精密透镜。'.repeat(20);
    const h = highlight({ title: '飞秒激光加工精度提升', body }, words('激光'));
    expect(marked(h.title)).toEqual(['激光']);
    expect(marked(h.body)).toEqual(['激光器件'.slice(0, marked(h.body)[0]!.length)]);
    expect(marked(h.body)[0]!.startsWith('激光')).toBe(true);
    expect(h.body.text.length).toBeLessThanOrEqual(SNIPPET_LENGTH + 2);
    expect(h.body.text.length).toBeGreaterThan(SNIPPET_LENGTH - 10);
    expect(h.body.text.startsWith('…')).toBe(true);
  });

  it('never lets HTML of a body through unescaped, and removes tags from the text', () => {
    const body = 'Intro <script>alert("x")</script> the <b onclick="evil()">laser</b> & its "beam" isn\'t <img src=x onerror=alert(1)> 5 < 6 > 4.';
    const h = highlight({ title: '<i>Laser</i> & "co"', body }, words('laser'));
    for (const part of [h.title, h.body]) {
      const withoutMarks = part.html.replaceAll('<mark>', '').replaceAll('</mark>', '');
      expect(withoutMarks).not.toMatch(/[<>"']/);
    }
    expect(h.body.text).not.toMatch(/<script|<b|<img|onerror/);
    expect(h.body.text).toContain('5 < 6 > 4');
    expect(h.body.html).toContain('<mark>laser</mark> &amp; its &quot;beam&quot; isn&#39;t');
    expect(h.title.html).toBe('&lt;i&gt;<mark>Laser</mark>&lt;/i&gt; &amp; &quot;co&quot;');
  });

  it('flattens Markdown: headings, lists, emphasis, links and images keep their text only', () => {
    const { text } = flatten('## Results\n\nRevenue rose **4%**, see [the report](https://x.example/r "R").\n\n- one\n- ![a chart](c.png) two');
    expect(text).toBe('Results Revenue rose 4%, see the report. one a chart two');
  });

  it('gives offsets in code points, so characters outside the BMP count once', () => {
    const h = highlight({ title: '𝐀𝐁 emoji 😀 then laser', body: '' }, words('laser'));
    expect(h.title.matches[0]).toMatchObject({ start: 16, length: 5 }); // 19 in UTF-16 code units
    expect(marked(h.title)).toEqual(['laser']);
  });
});

/**
 * flatten as it was before it built its text in typed arrays (a string and an array grown a
 * character at a time) and tried its expression only where markup can start (a global scan):
 * the faster one must give exactly the same text and offsets.
 */
function flattenReference(source: string): { text: string; from: Int32Array } {
  const MARKUP =
    /<!--[\s\S]*?(?:-->|$)|<\/?[A-Za-z][^<>]*>|!?\[(?=[^[\]\n]*\]\()|\]\([^()\s]*(?:\s+"[^"]*")?\)|(?<=^|\n)[ \t]*(?:#{1,6}[ \t]+|[-*+][ \t]+|\d{1,9}[.)][ \t]+|>[ \t]?)|\*\*?|__|`+|(?<=^|\n)[ \t]*(?:[-*_][ \t]*){3,}(?=\n|$)/g;
  const drop = new Uint8Array(source.length + 1);
  for (const m of source.matchAll(MARKUP)) drop.fill(1, m.index, m.index + m[0].length);
  let text = '';
  const from: number[] = [];
  let space = true;
  for (let i = 0; i < source.length; i++) {
    if (drop[i]) {
      if (!space && source.charCodeAt(i) === 60) {
        text += ' ';
        from.push(i);
        space = true;
      }
      continue;
    }
    const c = source[i]!;
    if (/\s/.test(c)) {
      if (space) continue;
      text += ' ';
      from.push(i);
      space = true;
      continue;
    }
    text += c;
    from.push(i);
    space = false;
  }
  if (text.endsWith(' ')) {
    text = text.slice(0, -1);
    from.pop();
  }
  return { text, from: Int32Array.from(from) };
}

describe('highlighting cost shortcuts give the same answers', () => {
  // Markdown marks, tags, every kind of white space JavaScript knows, Chinese, a character outside the BMP.
  const piece = fc.constantFrom('laser', 'Fiber', 'x', '2024', '#', '## ', '* ', '- ', '1. ', '> ', '**', '__', '`', '[', '](u)', '![', '<b>', '</b>', '<', '<a\nhref="u">', '](a<b)', '](u "t")', '1)', '<!--', '-->', '---', ' ', '\n', '\r', '\v', '\f', '\t', '\u0085', '\u00a0', '\u1680', '\u2003', '\u200b', '\u2028', '\u202f', '\u3000', '\ufeff', '激光', '😀', 'é', '.', ',');
  const markdown = fc.array(piece, { maxLength: 60 }).map((parts) => parts.join(''));

  it('flatten gives the text and offsets the character-at-a-time version gave', () => {
    fc.assert(
      fc.property(markdown, (source) => {
        const fast = flatten(source);
        const reference = flattenReference(source);
        expect(fast.text).toBe(reference.text);
        expect(Array.from(fast.from)).toEqual(Array.from(reference.from));
      }),
      { numRuns: 500 },
    );
  });

  it('ASCII text and words are matched as the tokenizing path matches them', () => {
    const word = fc.constantFrom('las', 'laser', 'fib', 'fiber', 'x', '20', 'a', 'be');
    const title = fc.array(fc.constantFrom('laser', 'Lasers', 'FIBER', 'fiber-laser', 'x', 'x2', '2024', 'beam', 'a', 'ab', '-', '.', ' ', "'", 'be'), { maxLength: 30 }).map((p) => p.join(' '));
    fc.assert(
      fc.property(title, fc.array(word, { minLength: 1, maxLength: 3 }), (text, ws) => {
        const query = queryWordsOf(ws);
        // A trailing Chinese character takes the general path (the text is no longer ASCII)
        // without matching anything: the matches before it must be the same.
        const ascii = highlight({ title: text, body: '' }, query).title.matches;
        const general = highlight({ title: `${text} 中`, body: '' }, query).title.matches;
        expect(ascii).toEqual(general);
      }),
      { numRuns: 500 },
    );
  });
  it('Chinese words are matched as the tokenizing path matches them', () => {
    const word = fc.constantFrom('激光', '光', '光学', '切割', '切', '器', '激', '𠀀', '中国', '々');
    const piece = fc.constantFrom('激光', '激光器', '光学', '光', '器', '切割', '切', '中', '中国', '国', '，', ',', ' ', '。', 'laser', 'x2', '𠀀', '𠀀光', '々', '〇', '\n', '**', '<b>');
    const text = fc.array(piece, { maxLength: 40 }).map((p) => p.join(''));
    fc.assert(
      fc.property(text, fc.array(word, { minLength: 1, maxLength: 3 }), (t, ws) => {
        const query = queryWordsOf(ws);
        // A Latin word that matches nothing sends the same query down the general path.
        const general = queryWordsOf([...ws, 'zzzq']);
        const fast = highlight({ title: t, body: t }, query);
        const slow = highlight({ title: t, body: t }, general);
        expect(fast.title.matches).toEqual(slow.title.matches);
        expect(fast.body).toEqual(slow.body);
      }),
      { numRuns: 1000 },
    );
  });
});
