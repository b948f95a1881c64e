import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderBody } from '../../src/content/body-render.js';
import { htmlProblems } from './allow-list-check.js';

/*
 * Generated bodies: Markdown and HTML fragments, hostile and ordinary, shuffled together with
 * arbitrary text. Whatever the mix, renderBody answers (never throws) and its HTML holds only
 * the contract's allow-list (allow-list-check.ts). FUZZ_SEED replays a failure.
 */

const FRAGMENTS = [
  '<script>', '</script>', '<style>', '<svg', '<math>', '<iframe', '<noscript>', '</noscript>', '<template>', '<textarea>', '<title>',
  '<xmp>', '<!--', '-->', '<![CDATA[', ']]>', '<img src=x onerror=alert(1)>', ' onerror=alert(1) ', ' onclick="alert(1)"', '"', "'",
  '`', '<', '>', '/', '=', '&', '&#', '&#x', ';', 'javascript:', 'JaVaScRiPt:', 'java\tscript:', '&#106;', '&colon;', 'data:', 'vbscript:',
  '<a href="', '<a href=', '</a>', '<img src="', '<p title="', '<form>', '<button formaction=', '<base href=', '<meta http-equiv=refresh content=',
  '[x](', '](', ')', '![x](', '[r]: ', '[r]', '<javascript:alert(1)>', '<https://example.com/>', 'https://example.com/', '\n', '\n\n', '```\n', '`',
  '    ', '- ', '1. ', '> ', '# ', '| a | b |\n|---|---|\n', '~~', '*', '_', '\\', '\u0000', '\u0001', '\u2028', 'x', 'laser ',
];

const body = fc
  .array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 4 })), { maxLength: 60 })
  .map((parts) => parts.join(''));

describe('generated bodies', () => {
  it('always render, and only to the allow-list', () => {
    const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
    console.log(`generated-bodies: FUZZ_SEED=${seed}`);
    fc.assert(
      fc.property(body, (markdown) => {
        const { html, text } = renderBody(markdown);
        expect(typeof text).toBe('string');
        expect(htmlProblems(html)).toEqual([]);
      }),
      { seed, numRuns: 3000 },
    );
  });
});
