/** A clock returns the current time in epoch milliseconds; tests inject their own. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

// ISO 8601 date-time with an explicit offset (Z or ±HH:MM / ±HHMM); fractions allowed.
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?([Zz]|[+-]\d{2}:?\d{2})$/;

/**
 * Parses an ISO 8601 timestamp with any offset into epoch milliseconds, truncated to whole
 * seconds (the API publishes whole seconds). Returns undefined for anything else, including
 * timestamps without an offset, whose instant would be a guess.
 */
export function parseIsoToMs(value: string): number | undefined {
  const m = ISO_DATE_TIME.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s = '00', , offset = 'Z'] = m;
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) {
    return undefined;
  }
  const utc = Date.UTC(Number(y), month - 1, day, hour, minute, second);
  // Date.UTC rolls 31 February over into March: reject such dates instead of moving them.
  if (new Date(utc).getUTCDate() !== day) return undefined;
  let offsetMinutes = 0;
  if (offset !== 'Z' && offset !== 'z') {
    const sign = offset.startsWith('-') ? -1 : 1;
    const digits = offset.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2, 4));
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = sign * (oh * 60 + om);
  }
  return utc - offsetMinutes * 60_000;
}

/** Formats epoch milliseconds as the API's timestamp: UTC, whole seconds, with a Z. */
export function formatUtcSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** Normalizes any ISO 8601 timestamp with an offset to `YYYY-MM-DDTHH:MM:SSZ`, or undefined. */
export function normalizeIso(value: string): string | undefined {
  const ms = parseIsoToMs(value);
  return ms === undefined ? undefined : formatUtcSeconds(ms);
}
