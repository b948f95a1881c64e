import { UsageError } from '../errors.js';

export const MAX_PARTNER_LENGTH = 200;

/*
 * Characters that make a name read as something it is not, or garble a terminal or a log:
 * C0 and C1 controls and DEL (Cc), format characters (Cf: the bidi embeddings and overrides
 * U+202A-U+202E and isolates U+2066-U+2069, zero-width spaces and joiners U+200B-U+200D,
 * the marks U+200E/U+200F/U+061C, U+FEFF, soft hyphen, tag characters...), surrogates (Cs),
 * private use (Co), unassigned code points (Cn), and the line and paragraph separators.
 */
const FORBIDDEN = /[\p{C}\p{Zl}\p{Zp}]/u;
const SPACES = /\p{Zs}+/gu;

const NAMES: Record<number, string> = {
  0x202a: 'a left-to-right embedding',
  0x202b: 'a right-to-left embedding',
  0x202c: 'a pop directional formatting',
  0x202d: 'a left-to-right override',
  0x202e: 'a right-to-left override',
  0x2066: 'a left-to-right isolate',
  0x2067: 'a right-to-left isolate',
  0x2068: 'a first-strong isolate',
  0x2069: 'a pop directional isolate',
  0x200b: 'a zero-width space',
  0x200c: 'a zero-width non-joiner',
  0x200d: 'a zero-width joiner',
  0x200e: 'a left-to-right mark',
  0x200f: 'a right-to-left mark',
  0xfeff: 'a zero-width no-break space (BOM)',
};

function describe(char: string): string {
  const code = char.codePointAt(0)!;
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  const name = NAMES[code] ?? (/\p{Cc}/u.test(char) ? 'a control character' : 'an invisible or formatting character');
  return `${hex} (${name})`;
}

/**
 * The partner name as stored, or a UsageError saying what is wrong with it. The name is
 * NFC-normalised (so one name has one spelling), runs of spaces of any kind become one
 * ASCII space and it is trimmed; characters that can disguise or garble text are refused
 * rather than silently removed, so the editor sees exactly what will be stored.
 */
export function validPartnerName(name: string): string {
  const normalized = name.normalize('NFC');
  const forbidden = FORBIDDEN.exec(normalized);
  if (forbidden) {
    throw new UsageError(`the partner name must not contain ${describe(forbidden[0])}: type it in plain text`);
  }
  const partner = normalized.replace(SPACES, ' ').trim();
  if (partner === '') throw new UsageError('the partner name must not be empty');
  if ([...partner].length > MAX_PARTNER_LENGTH) {
    throw new UsageError(`the partner name must be at most ${MAX_PARTNER_LENGTH} characters`);
  }
  return partner;
}

/** A stored name made safe to print on a terminal: anything forbidden above shown as \u{...}. */
export function printableName(name: string): string {
  return name.replace(new RegExp(FORBIDDEN.source, 'gu'), (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}
