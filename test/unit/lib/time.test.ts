import { describe, expect, it } from 'vitest';
import { formatUtcSeconds, normalizeIso, parseIsoToMs } from '../../../src/lib/time.js';

describe('normalizeIso / parseIsoToMs', () => {
  it.each([
    ['2026-10-20T16:00:00+08:00', '2026-10-20T08:00:00Z'],
    ['2026-10-20T08:00:00Z', '2026-10-20T08:00:00Z'],
    ['2026-10-20T08:00:00+00:00', '2026-10-20T08:00:00Z'],
    ['2026-10-20T16:00:00-05:30', '2026-10-20T21:30:00Z'],
    ['2026-10-20T16:00:00+0800', '2026-10-20T08:00:00Z'],
    ['2026-10-20T16:00:00-0530', '2026-10-20T21:30:00Z'],
    ['2026-01-01T02:00:00+08:00', '2025-12-31T18:00:00Z'],
    ['2026-12-31T22:00:00-05:00', '2027-01-01T03:00:00Z'],
    ['2026-10-20T08:00:00z', '2026-10-20T08:00:00Z'],
    ['2028-02-29T12:00:00Z', '2028-02-29T12:00:00Z'],
  ])('%s -> %s', (input, expected) => {
    expect(normalizeIso(input)).toBe(expected);
    expect(parseIsoToMs(input)).toBe(Date.parse(expected));
  });

  it('truncates fractions of a second instead of rounding them', () => {
    expect(normalizeIso('2026-10-20T08:00:00.999Z')).toBe('2026-10-20T08:00:00Z');
    expect(normalizeIso('2026-10-20T16:00:59.999999+08:00')).toBe('2026-10-20T08:00:59Z');
    expect(parseIsoToMs('2026-10-20T08:00:00.5Z')).toBe(Date.UTC(2026, 9, 20, 8, 0, 0));
    expect(normalizeIso('2026-10-20T08:00:00.123456789Z')).toBe('2026-10-20T08:00:00Z');
  });

  it.each([
    ['31 February', '2026-02-31T00:00:00Z'],
    ['29 February of a common year', '2026-02-29T00:00:00Z'],
    ['31 April', '2026-04-31T00:00:00Z'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['month 00', '2026-00-10T00:00:00Z'],
    ['day 00', '2026-10-00T00:00:00Z'],
    ['hour 24', '2026-10-20T24:00:00Z'],
    ['minute 60', '2026-10-20T08:60:00Z'],
    ['second 60', '2026-10-20T08:00:60Z'],
    ['no offset', '2026-10-20T08:00:00'],
    ['no offset with a fraction', '2026-10-20T08:00:00.000'],
    ['a date alone', '2026-10-20'],
    ['an offset hour of 24', '2026-10-20T08:00:00+24:00'],
    ['an offset minute of 60', '2026-10-20T08:00:00+05:60'],
    ['an offset without minutes', '2026-10-20T08:00:00+08'],
    ['garbage', 'not a date'],
    ['an empty string', ''],
    ['an RFC 2822 date', 'Tue, 20 Oct 2026 08:00:00 GMT'],
    ['surrounding whitespace', ' 2026-10-20T08:00:00Z '],
    ['a trailing newline', '2026-10-20T08:00:00Z\n'],
  ])('rejects %s (%s) with undefined', (_name, input) => {
    expect(parseIsoToMs(input)).toBeUndefined();
    expect(normalizeIso(input)).toBeUndefined();
  });
});

describe('formatUtcSeconds', () => {
  it('formats as YYYY-MM-DDTHH:MM:SSZ in UTC', () => {
    expect(formatUtcSeconds(Date.UTC(2026, 9, 20, 8, 5, 9))).toBe('2026-10-20T08:05:09Z');
    expect(formatUtcSeconds(0)).toBe('1970-01-01T00:00:00Z');
  });

  it('truncates milliseconds to the whole second', () => {
    expect(formatUtcSeconds(Date.UTC(2026, 9, 20, 8, 0, 0) + 999)).toBe('2026-10-20T08:00:00Z');
    expect(formatUtcSeconds(Date.UTC(2026, 11, 31, 23, 59, 59) + 999)).toBe('2026-12-31T23:59:59Z');
  });

  it('round-trips through parseIsoToMs', () => {
    const ms = Date.UTC(2026, 1, 28, 23, 59, 59);
    expect(parseIsoToMs(formatUtcSeconds(ms))).toBe(ms);
  });
});
