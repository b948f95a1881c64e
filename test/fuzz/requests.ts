import fc from 'fast-check';
import { Agent, request as httpRequest } from 'node:http';

/*
 * Generated HTTP requests for the API fuzz suite, and a keep-alive client to send them.
 * Node's client refuses bytes outside \x21-\xff in a path and control characters in header
 * values, so those go percent-encoded or into the raw-socket tests (test/http/access/server-limits).
 */

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
}

export interface FuzzResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** The seed of this run: FUZZ_SEED to replay a failure, else a fresh one (printed). */
export function fuzzSeed(): number {
  const given = process.env.FUZZ_SEED;
  return given !== undefined && given !== '' ? Number(given) : (Math.random() * 2 ** 31) | 0;
}

/** Generated requests per route: FUZZ_RUNS to change it (CI keeps the default). */
export function fuzzRuns(fallback = 10_000): number {
  const given = process.env.FUZZ_RUNS;
  return given !== undefined && given !== '' ? Number(given) : fallback;
}

// --- values -------------------------------------------------------------------------------

const CONTROL = fc.constantFrom(...Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)), '\u007f', '\u0085', '\u2028', '\u2029', '\u202e', '\ufeff', '\u200b');
const TRICKY = fc.constantFrom(
  '', ' ', '0', '1', '-1', '+1', '1.0', '1e3', '0x10', '00001', ' 5', '5 ', '５', '٣', '9'.repeat(30), 'NaN', 'Infinity', 'null',
  'undefined', 'true', '[]', '{}', 'en', 'zh', 'EN', 'zh-CN', 'en ', 'fr', 'fiber', 'laser', '激光', 'la', 'l', "' OR 1=1 --",
  '"; DROP TABLE articles; --', 'laser*', 'laser"', 'NEAR(a b)', 'a AND b', 'a OR b', 'NOT a', '(a)', '^a', 'a:b', '%', '%00', '%zz',
  '../../etc/passwd', '..%2f..%2f', '<script>alert(1)</script>', '${jndi:ldap://x}', '{{7*7}}', '\\', '\u0000', '🔥🔥', 'c_abc', '2026-01-01T00:00:00Z',
  'lsk_', 'a'.repeat(201), 'x'.repeat(2_100),
);
// Any Unicode, controls, and the odd huge value.
export const anyValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 10, arbitrary: TRICKY },
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 6, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 4, arbitrary: fc.array(fc.oneof(CONTROL, fc.string({ maxLength: 3 })), { maxLength: 10 }).map((parts) => parts.join('')) },
  { weight: 2, arbitrary: fc.integer({ min: -1_000, max: 1_000_000 }).map(String) },
  // Rare, or most requests would only meet the header size limit (431).
  { weight: 1, arbitrary: fc.tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 2 }), fc.integer({ min: 100, max: 2_500 })).map(([s, n]) => s.repeat(n)) },
);

// Percent-encoded as a client would, or sent with the bytes Node's client lets through raw.
function encodeLoosely(value: string, raw: boolean): string {
  if (!raw) return encodeURIComponent(value);
  return [...value].map((ch) => (/^[\u0021-\u00ff]$/.test(ch) && ch !== '#' && ch !== '?' ? ch : encodeURIComponent(ch))).join('');
}

const paramName = (known: readonly string[]) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...known) },
    { weight: 2, arbitrary: fc.constantFrom('api_key', 'key', 'token', 'access_token', 'X-API-Key', 'auth', 'password', 'signature', 'foo', 'locale[]', 'page[0]', 'Locale', 'LIMIT') },
    { weight: 1, arbitrary: anyValue },
  );

/** A query string: known parameters (valid or not), unknown ones, repeats, raw bytes. */
export function queryString(known: readonly string[], valid: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> {
  const param = fc.tuple(paramName(known), fc.boolean(), fc.boolean()).chain(([name, useValid, raw]) => {
    const value = useValid && Object.hasOwn(valid, name) ? valid[name]! : anyValue;
    return value.map((v) => `${encodeLoosely(name, raw)}=${encodeLoosely(v, raw)}`);
  });
  const separator = fc.constantFrom('&', '&', '&', ';', '&&');
  return fc.tuple(fc.array(param, { maxLength: 6 }), fc.boolean(), separator).map(([parts, dup, sep]) => {
    // A parameter given twice is its own rule (400): make repeats frequent.
    const all = dup && parts.length > 0 ? [...parts, parts[0]!] : parts;
    return all.length === 0 ? '' : `?${all.join(sep)}`;
  });
}

/** A path segment: a real slug, or anything, encoded or raw. */
export function segment(real: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...real) },
    { weight: 4, arbitrary: fc.tuple(anyValue, fc.boolean()).map(([v, raw]) => encodeLoosely(v, raw)) },
    { weight: 1, arbitrary: fc.constantFrom('%', '%E0%A4%A', '%FF%FE', '%C0%AF', '..', '.', '%2e%2e', '%2F', 'lsk_' + 'A'.repeat(32)) },
  );
}

// Header values as Node's client lets them through: tab, printable ASCII and latin1.
const headerValue = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'\t !"#$%&\'()*+,-./0123456789:;<=>?@AZaz[\\]^_`{|}~\u00a0\u00ff'.split('')), maxLength: 40 }),
  fc.integer({ min: 1, max: 100 }).chain((n) => (n > 95 ? fc.integer({ min: 1_000, max: 9_000 }) : fc.constant(n))).map((n) => 'v'.repeat(n)),
  fc.constantFrom('*', 'W/"x"', '"x"', 'Mon, 01 Jan 2024 00:00:00 GMT', 'garbage', 'gzip, br', 'application/json', 'no-cache', '0', ''),
);
const headerName = fc.oneof(
  fc.constantFrom('If-None-Match', 'If-Modified-Since', 'Accept', 'Accept-Encoding', 'Accept-Language', 'Cache-Control', 'X-Request-Id', 'X-Forwarded-For', 'Range', 'Origin', 'Cookie', 'Authorization', 'Content-Type', 'Forwarded', 'X-Forwarded-Proto', 'Upgrade'),
  fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,30}$/),
);

/** Extra headers, and the key header in one of its forms. */
export function headers(key: { valid: string; revoked: string }): fc.Arbitrary<Record<string, string>> {
  const apiKey = fc.oneof(
    { weight: 12, arbitrary: fc.constant<string | undefined>(key.valid) },
    { weight: 1, arbitrary: fc.constant<string | undefined>(undefined) },
    { weight: 1, arbitrary: fc.constant<string | undefined>(key.revoked) },
    { weight: 1, arbitrary: headerValue.map((v): string | undefined => v) },
    { weight: 1, arbitrary: fc.constant<string | undefined>(`${key.valid}x`) },
  );
  return fc.tuple(apiKey, fc.array(fc.tuple(headerName, headerValue), { maxLength: 4 })).map(([k, extra]) => {
    const out: Record<string, string> = {};
    for (const [name, value] of extra) {
      // Values Node's client would refuse or that change the framing are not this suite's subject.
      if (/^(content-length|transfer-encoding|connection|host|expect|upgrade|te|trailer)$/i.test(name)) continue;
      out[name] = value;
    }
    if (k !== undefined) out['X-API-Key'] = k;
    return out;
  });
}

export const method = fc.oneof(
  { weight: 12, arbitrary: fc.constant('GET') },
  { weight: 3, arbitrary: fc.constant('HEAD') },
  { weight: 2, arbitrary: fc.constantFrom('POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND', 'PURGE', 'MKCOL', 'LINK', 'SEARCH', 'QUERY', 'get', 'Get', 'BREW', 'M-SEARCH') },
);

// --- client -------------------------------------------------------------------------------

export function createClient(baseUrl: string): { send(req: FuzzRequest): Promise<FuzzResponse>; close(): void } {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  return {
    send(req) {
      return new Promise((resolve, reject) => {
        const outgoing = httpRequest(
          { host: url.hostname, port: url.port, method: req.method, path: req.path, headers: req.headers, agent },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
            res.on('error', reject);
          },
        );
        outgoing.on('error', reject);
        outgoing.end();
      });
    },
    close() {
      agent.destroy();
    },
  };
}
