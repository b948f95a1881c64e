/**
 * The one rule for every URL that reaches a partner: an absolute http: or https: URL, judged
 * the way a browser would resolve it, and handed on in the form the browser would resolve.
 *
 * Partners put these values in `href` and `src` attributes. A check on the raw text is not
 * enough: the WHATWG URL parser (browsers, and Node's URL) strips leading and trailing C0
 * controls and spaces, removes tabs and newlines anywhere, ignores the scheme's case and
 * reads `\` as `/` in http(s) URLs, so ` \x01JaVa\tScRiPt:alert(1)` runs as `javascript:`.
 * Parsing with the same parser and requiring its protocol to be http: or https: closes every
 * such variant at once; returning `href` (not the raw text) means every consumer, browser or
 * not, sees one unambiguous, ASCII, percent-encoded string (`"` and `<` cannot break out of
 * an attribute, `https:\\host` becomes `https://host/`).
 */

/** Longest URL accepted, before and after normalisation. */
export const MAX_URL_LENGTH = 2048;

export type UrlVerdict = { ok: true; href: string } | { ok: false; reason: string };

export function checkPublicUrl(value: string): UrlVerdict {
  if (value.length > MAX_URL_LENGTH) return { ok: false, reason: `longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    // No base: a relative or protocol-relative value (`//host`, `/path`) has no meaning of its
    // own for a partner's page, so it cannot parse.
    url = new URL(value);
  } catch {
    return { ok: false, reason: 'not an absolute http(s) URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, reason: `not an absolute http(s) URL (scheme ${JSON.stringify(url.protocol.slice(0, 20))})` };
  }
  // `https://trusted.example@evil.example/` reads as trusted and goes to evil: refuse credentials.
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'not an absolute http(s) URL (carries user:password@)' };
  if (url.hostname === '') return { ok: false, reason: 'not an absolute http(s) URL (no host)' };
  if (url.href.length > MAX_URL_LENGTH) return { ok: false, reason: `longer than ${MAX_URL_LENGTH} characters once normalised` };
  return { ok: true, href: url.href };
}
