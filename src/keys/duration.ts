import { UsageError } from '../errors.js';

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DURATION = /^([0-9]{1,6})([mhdw])$/;
const MAX_MS = 3650 * UNITS.d!;

/**
 * Parses an editor's duration: a whole number and a unit, `30m`, `12h`, `90d`, `2w`. `0`
 * alone is allowed where `allowZero` says so (an overlap that ends now). Ten years at most.
 */
export function parseDuration(value: string, option: string, { allowZero = false } = {}): number {
  if (allowZero && value === '0') return 0;
  const match = DURATION.exec(value.trim());
  const ms = match ? Number(match[1]) * UNITS[match[2]!]! : NaN;
  if (!match || (ms === 0 && !allowZero) || ms > MAX_MS) {
    throw new UsageError(
      `${option} needs a duration such as 30m, 12h, 90d or 2w (at most 3650d${allowZero ? ', or 0' : ', more than 0'}), got "${value}"`,
    );
  }
  return ms;
}
