import { entryBytes, Lru } from '../../lib/lru.js';
/**
 * The request URL as it may be logged. Partners bring habits from other APIs: `?api_key=`,
 * `?token=`, `?access_token=`, `?signature=`... Our key is read from the header only, so any
 * such value is at best useless and at worst a live secret (ours or another service's): the
 * value of every credential-like parameter is replaced, whatever it looks like, and anything
 * shaped like one of our keys is masked wherever it appears (path, parameter name or value,
 * percent-encoded or not).
 */

const CENSOR = '[redacted]';
const OUR_KEY = /lsk(?:_|%5f)[0-9a-z]*/gi;
const OUR_KEY_DECODED = /lsk_/i;

// Matched against the parameter name decoded, lowercased, with everything but letters and
// digits removed: `API-Key`, `api_key[]`, `x%2Dapi%2Dkey` and `Access.Token` all count.
const CREDENTIAL_NAME =
  /key|token|auth|passw|pwd|secret|signature|credential|session|cookie|bearer|jwt|otp|^sig$|^pass$|^code$|^hmac$|^hash$/;

export function isCredentialName(rawName: string): boolean {
  return CREDENTIAL_NAME.test(decodeLoosely(rawName).toLowerCase().replace(/[^a-z0-9]/g, ''));
}

// Repeated pages repeat their URL: the request log redacts each distinct one once.
const redacted = new Lru<string>(256 * 1024);
const MAX_REMEMBERED_URL = 512;

export function redactKeys(url: string): string {
  if (url.length > MAX_REMEMBERED_URL) return redact(url);
  let safe = redacted.get(url);
  if (safe === undefined) {
    safe = redact(url);
    redacted.set(url, safe, entryBytes(url, safe.length * 2));
  }
  return safe;
}

function redact(url: string): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const safePath = redactPath(path);
  if (q === -1) return safePath;
  const params = url.slice(q + 1).split(/([&;])/);
  for (let i = 0; i < params.length; i += 2) {
    const param = params[i]!;
    if (param === '') continue;
    const eq = param.indexOf('=');
    const name = eq === -1 ? param : param.slice(0, eq);
    const value = eq === -1 ? '' : param.slice(eq + 1);
    const safeName = redactOurKey(name);
    if (eq === -1) params[i] = safeName;
    else if (isCredentialName(name) || OUR_KEY_DECODED.test(decodeLoosely(value))) params[i] = `${safeName}=${CENSOR}`;
    else params[i] = `${safeName}=${value}`;
  }
  return `${safePath}?${params.join('')}`;
}

function redactPath(path: string): string {
  if (!/lsk/i.test(path) && !path.includes('%')) return path;
  return path
    .split('/')
    .map((segment) => (OUR_KEY_DECODED.test(decodeLoosely(segment)) ? `lsk_${CENSOR}` : segment))
    .join('/');
}

function redactOurKey(text: string): string {
  if (OUR_KEY_DECODED.test(decodeLoosely(text))) return `lsk_${CENSOR}`;
  return text.replace(OUR_KEY, `lsk_${CENSOR}`);
}

// Form-style decoding that never throws: a malformed escape is kept as it is, so a name like
// `api%ZZkey` still reads as `api%ZZkey` (and is still caught by the `key` in it).
function decodeLoosely(text: string): string {
  if (!text.includes('%') && !text.includes('+')) return text;
  const spaced = text.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced.replace(/%[0-9a-f]{2}/gi, (escape) => {
      try {
        return decodeURIComponent(escape);
      } catch {
        return escape;
      }
    });
  }
}
