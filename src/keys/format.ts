import { hash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'lsk_';
const BODY_LENGTH = 32;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const WELL_FORMED = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH}}$`);
/** How much of a key editors see in listings: the prefix and four characters. */
const DISPLAY_LENGTH = KEY_PREFIX.length + 4;

/**
 * A new partner key: `lsk_` and 32 base62 characters, about 190 random bits. Bytes above the
 * largest multiple of 62 are discarded so every character is equally likely.
 */
export function generateKey(): string {
  let body = '';
  while (body.length < BODY_LENGTH) {
    for (const byte of randomBytes(48)) {
      if (byte < 248 && body.length < BODY_LENGTH) body += ALPHABET[byte % 62];
    }
  }
  return KEY_PREFIX + body;
}

export function isWellFormedKey(value: string): boolean {
  return WELL_FORMED.test(value);
}

/** SHA-256 is enough for keys of 190 random bits: there is nothing to brute-force. */
export function hashKey(key: string): string {
  // The one-shot form: checked on every request, it costs half of createHash's.
  return hash('sha256', key, 'hex');
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_LENGTH);
}
