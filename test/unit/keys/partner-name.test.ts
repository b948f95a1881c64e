import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/errors.js';
import { parseDuration } from '../../../src/keys/duration.js';
import { parseRate } from '../../../src/keys/manage.js';
import { printableName, validPartnerName } from '../../../src/keys/partner-name.js';

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('expected a UsageError');
}

describe('validPartnerName', () => {
  it.each([
    ['U+202A', 'a\u202Ab'], ['U+202B', 'a\u202Bb'], ['U+202C', 'a\u202Cb'], ['U+202D', 'a\u202Db'], ['U+202E', 'a\u202Eb'],
    ['U+2066', 'a\u2066b'], ['U+2067', 'a\u2067b'], ['U+2068', 'a\u2068b'], ['U+2069', 'a\u2069b'],
    ['U+200B', 'a\u200Bb'], ['U+200C', 'a\u200Cb'], ['U+200D', 'a\u200Db'], ['U+200E', 'a\u200Eb'], ['U+200F', 'a\u200Fb'],
    ['U+FEFF', '\uFEFFab'], ['U+2060', 'a\u2060b'], ['U+061C', 'a\u061Cb'], ['U+00AD', 'a\u00ADb'], ['U+180E', 'a\u180Eb'],
    ['U+0000', 'a\u0000b'], ['U+0007', 'a\u0007b'], ['U+001B', 'a\u001Bb'], ['U+007F', 'a\u007Fb'],
    ['U+0080', 'a\u0080b'], ['U+0085', 'a\u0085b'], ['U+009B', 'a\u009Bb'], ['U+009F', 'a\u009Fb'],
    ['U+2028', 'a\u2028b'], ['U+2029', 'a\u2029b'], ['U+E0041', 'a\u{E0041}b'], ['U+E000', 'a\uE000b'],
    ['U+D800', 'a\uD800b'], ['U+0378', 'a\u0378b'],
  ])('refuses %s, naming it', (code, name) => {
    const message = refusal(() => validPartnerName(name));
    expect(message).toContain(code);
    expect(message).not.toMatch(/\p{C}/u);
  });

  it('names bidi characters and controls in words', () => {
    expect(refusal(() => validPartnerName('a\u202Eb'))).toContain('right-to-left override');
    expect(refusal(() => validPartnerName('a\u2066b'))).toContain('isolate');
    expect(refusal(() => validPartnerName('a\u0007b'))).toContain('control character');
  });

  it('normalises to NFC, collapses any spaces to one and trims', () => {
    expect(validPartnerName('Cafe\u0301')).toBe('Caf\u00E9');
    expect(validPartnerName('\u212B ngstr\u00F6m')).toBe('\u00C5 ngstr\u00F6m');
    expect(validPartnerName(' \u00A0Acme\u2003\u3000 Media\u202F')).toBe('Acme Media');
  });

  it('keeps ordinary text of any script, combining marks and emoji', () => {
    for (const name of ['激光世界', 'Лазер Медиа', 'ליזר מדיה', 'Ærø & Co.', 'Laser 🔦 News', 'e\u0301\u0302']) {
      expect(validPartnerName(name)).toBe(name.normalize('NFC'));
    }
  });

  it('caps the length at 200 code points, after normalisation', () => {
    expect(validPartnerName('𝐀'.repeat(200))).toBe('𝐀'.repeat(200));
    expect(refusal(() => validPartnerName('𝐀'.repeat(201)))).toContain('200');
    expect(refusal(() => validPartnerName('   '))).toContain('empty');
  });

  it('printableName escapes what validPartnerName refuses, and nothing else', () => {
    expect(printableName('Evil\u202Egoogle\u0007')).toBe('Evil\\u{202e}google\\u{7}');
    expect(printableName('激光 Media')).toBe('激光 Media');
  });
});

describe('parseDuration', () => {
  it('reads minutes, hours, days and weeks', () => {
    expect(parseDuration('30m', '--x')).toBe(30 * 60_000);
    expect(parseDuration('12h', '--x')).toBe(12 * 3_600_000);
    expect(parseDuration('90d', '--x')).toBe(90 * 86_400_000);
    expect(parseDuration('2w', '--x')).toBe(14 * 86_400_000);
    expect(parseDuration('0', '--overlap', { allowZero: true })).toBe(0);
  });

  it.each(['', '0', '0d', '90', 'd', '1.5d', '-1d', '90 days', '1y', '3651d', '99999999d'])('refuses %j naming the option', (value) => {
    expect(refusal(() => parseDuration(value, '--expires-in'))).toContain('--expires-in');
  });
});

describe('parseRate', () => {
  it('reads a whole number from 1, or default', () => {
    expect(parseRate('1')).toBe(1);
    expect(parseRate('600')).toBe(600);
    expect(parseRate('1000000')).toBe(1_000_000);
    expect(parseRate('default')).toBeNull();
  });

  it.each(['0', '-5', '1.5', '1e3', '1000001', 'fast', '', ' 5'])('refuses %j', (value) => {
    expect(refusal(() => parseRate(value))).toMatch(/rate/);
  });
});
