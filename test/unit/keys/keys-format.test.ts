import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openKeysReader, openKeysWriter, type KeysDb } from '../../../src/db/keys/keys-connection.js';
import { KeysStore, type KeysSession } from '../../../src/db/keys/keys-store.js';
import { ApiKeyError } from '../../../src/errors.js';
import { displayPrefix, generateKey, hashKey, isWellFormedKey, KEY_PREFIX } from '../../../src/keys/format.js';
import { createKey, revokeKey, rotateKey, setKeyRate } from '../../../src/keys/manage.js';
import { KeyVerifier } from '../../../src/keys/verifier.js';
import { memoryLogger } from '../../support/api.js';
import { tempDir } from '../../support/snapshot-fixture.js';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const WELL_FORMED = /^lsk_[0-9A-Za-z]{32}$/;

describe('generateKey', () => {
  const keys = Array.from({ length: 20_000 }, () => generateKey());

  it('makes lsk_ followed by 32 base62 characters', () => {
    expect(KEY_PREFIX).toBe('lsk_');
    for (const key of keys) expect(key).toMatch(WELL_FORMED);
  });

  it('never repeats a key over 20,000 keys', () => {
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('uses every base62 character about equally often (no modulo bias)', () => {
    const counts = new Map<string, number>([...ALPHABET].map((c) => [c, 0]));
    for (const key of keys) {
      for (const c of key.slice(KEY_PREFIX.length)) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    expect(counts.size).toBe(62);
    const expected = (keys.length * 32) / 62;
    let chiSquare = 0;
    for (const [c, count] of counts) {
      expect(count, `character ${c}`).toBeGreaterThan(0);
      // Within 10% of the mean: plain `byte % 62` would make 0-7 about 25% more frequent.
      expect(Math.abs(count - expected) / expected, `character ${c}`).toBeLessThan(0.1);
      chiSquare += (count - expected) ** 2 / expected;
    }
    // 61 degrees of freedom: a fair generator exceeds 130 with probability below 1e-6.
    expect(chiSquare).toBeLessThan(130);
  });

  it('uses every character at every position (no fixed or skewed position)', () => {
    for (let position = KEY_PREFIX.length; position < KEY_PREFIX.length + 32; position += 1) {
      const seen = new Set(keys.map((k) => k[position]));
      expect(seen.size, `position ${position}`).toBe(62);
    }
  });
});

describe('isWellFormedKey', () => {
  it('accepts generated keys', () => {
    for (let i = 0; i < 100; i += 1) expect(isWellFormedKey(generateKey())).toBe(true);
    expect(isWellFormedKey(`lsk_${'aZ09'.repeat(8)}`)).toBe(true);
  });

  it.each([
    ['an empty string', ''],
    ['the prefix alone', 'lsk_'],
    ['31 characters after the prefix', `lsk_${'a'.repeat(31)}`],
    ['33 characters after the prefix', `lsk_${'a'.repeat(33)}`],
    ['an upper-case prefix', `LSK_${'a'.repeat(32)}`],
    ['another prefix', `sk_${'a'.repeat(33)}`],
    ['no prefix', 'a'.repeat(36)],
    ['a dash in the body', `lsk_${'a'.repeat(31)}-`],
    ['an underscore in the body', `lsk_${'a'.repeat(31)}_`],
    ['a space in the body', `lsk_${'a'.repeat(15)} ${'a'.repeat(16)}`],
    ['surrounding whitespace', ` lsk_${'a'.repeat(32)} `],
    ['a trailing newline', `lsk_${'a'.repeat(32)}\n`],
    ['a non-ASCII look-alike letter', `lsk_${'a'.repeat(31)}а`],
    ['a full-width digit', `lsk_${'a'.repeat(31)}１`],
  ])('rejects %s', (_name, value) => {
    expect(isWellFormedKey(value)).toBe(false);
  });
});

describe('hashKey', () => {
  it('is the SHA-256 of the key as lower-case hex', () => {
    // The FIPS 180-2 test vector.
    expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const key = generateKey();
    expect(hashKey(key)).toBe(createHash('sha256').update(key, 'utf8').digest('hex'));
    expect(hashKey(key)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('gives different keys different hashes and the same key the same hash', () => {
    const key = generateKey();
    expect(hashKey(key)).toBe(hashKey(key));
    expect(hashKey(key)).not.toBe(hashKey(generateKey()));
  });
});

describe('displayPrefix', () => {
  it('shows the lsk_ prefix and the first four characters of the key only', () => {
    const key = generateKey();
    expect(displayPrefix(key)).toBe(key.slice(0, 8));
    expect(displayPrefix(key)).toMatch(/^lsk_[0-9A-Za-z]{4}$/);
    expect(displayPrefix('lsk_ABCDefgh')).toBe('lsk_ABCD');
  });
});

describe('KeyVerifier over a real keys database file', () => {
  const dir = tempDir('key-verifier-test-');
  const path = dir.path('keys.db');
  const NOW = Date.parse('2026-11-01T12:00:00Z');
  const clock = () => NOW;
  let writer: KeysDb;
  let reader: KeysDb;
  let active: { id: number; key: string };
  let revoked: { id: number; key: string };
  const used: number[] = [];

  beforeAll(() => {
    writer = openKeysWriter(path, { busyTimeoutMs: 5_000, create: true }).db;
    active = createKey(writer, 'Acme Media', clock);
    revoked = createKey(writer, 'Former Partner', clock);
    revokeKey(writer, revoked.id, clock);
    reader = openKeysReader(path, { busyTimeoutMs: 5_000 });
  });

  afterAll(() => {
    reader.$client.close();
    writer.$client.close();
    dir.cleanup();
  });

  const session = (generation: number): KeysSession => ({
    db: reader,
    generation,
    read: (fn) => fn(reader),
    used: (id) => used.push(id),
  });

  function codeOf(fn: () => unknown): string {
    try {
      fn();
    } catch (error) {
      expect(error).toBeInstanceOf(ApiKeyError);
      expect((error as ApiKeyError).status).toBe(401);
      return (error as ApiKeyError).code;
    }
    throw new Error('expected the verifier to refuse the key');
  }

  it('returns the id of an active key, with a null rate (the configured default), and notes its use', () => {
    used.length = 0;
    expect(new KeyVerifier(clock).verify(active.key, session(1))).toEqual({ id: active.id, rateLimitPerMinute: null });
    expect(used).toEqual([active.id]);
  });

  it('reads the keys when warmed, counting no refusal and no use, so that the first request reads nothing', () => {
    used.length = 0;
    let reads = 0;
    const counted: KeysSession = { ...session(7), read: (fn) => (reads++, fn(reader)) };
    const verifier = new KeyVerifier(clock);
    verifier.warm(counted);
    expect(reads).toBe(1);
    expect(used).toEqual([]);
    expect(verifier.stats().refused).toEqual({ missing_api_key: 0, invalid_api_key: 0, revoked_api_key: 0, expired_api_key: 0 });
    expect(verifier.verify(active.key, counted).id).toBe(active.id);
    expect(reads).toBe(1);
    // A new generation (a commit by the CLI) is still read on the next request.
    expect(codeOf(() => verifier.verify(revoked.key, { ...counted, generation: 8 }))).toBe('revoked_api_key');
    expect(reads).toBe(2);
  });

  it('returns the rate an editor set for the key', () => {
    const limited = createKey(writer, 'Limited Partner', clock, { rateLimitPerMinute: 600 });
    expect(new KeyVerifier(clock).verify(limited.key, session(2))).toEqual({ id: limited.id, rateLimitPerMinute: 600 });
    setKeyRate(writer, limited.id, 30, clock);
    expect(new KeyVerifier(clock).verify(limited.key, session(3)).rateLimitPerMinute).toBe(30);
  });

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['a blank header', '   '],
  ])('answers missing_api_key for %s', (_name, header) => {
    expect(codeOf(() => new KeyVerifier(clock).verify(header, session(1)))).toBe('missing_api_key');
  });

  it('answers invalid_api_key for a malformed key', () => {
    const verifier = new KeyVerifier(clock);
    for (const header of ['abc', 'lsk_short', `${active.key}x`, active.key.slice(0, -1), `Bearer ${active.key}`]) {
      expect(codeOf(() => verifier.verify(header, session(1))), header).toBe('invalid_api_key');
    }
  });

  it('answers invalid_api_key for a well-formed key that was never issued', () => {
    expect(codeOf(() => new KeyVerifier(clock).verify(generateKey(), session(1)))).toBe('invalid_api_key');
  });

  it('answers revoked_api_key for a revoked key, and does not note a use', () => {
    used.length = 0;
    expect(codeOf(() => new KeyVerifier(clock).verify(revoked.key, session(1)))).toBe('revoked_api_key');
    expect(used).toEqual([]);
  });

  it('answers expired_api_key from the second the key expires, without a new generation', () => {
    const expiring = createKey(writer, 'Short-lived Partner', clock, { expiresInMs: 60_000 });
    let now = NOW;
    const verifier = new KeyVerifier(() => now);
    expect(verifier.verify(expiring.key, session(30)).id).toBe(expiring.id);
    now = NOW + 59_999;
    expect(verifier.verify(expiring.key, session(30)).id).toBe(expiring.id);
    now = NOW + 60_000;
    expect(codeOf(() => verifier.verify(expiring.key, session(30)))).toBe('expired_api_key');
  });

  it('answers revoked_api_key, not expired_api_key, for a key both revoked and expired', () => {
    const both = createKey(writer, 'Both Partner', clock, { expiresInMs: 60_000 });
    revokeKey(writer, both.id, clock);
    expect(codeOf(() => new KeyVerifier(() => NOW + 120_000).verify(both.key, session(40)))).toBe('revoked_api_key');
  });

  it('keeps a rotated key working until the overlap ends, and the new key from the start', () => {
    const old = createKey(writer, 'Rotating Partner', clock);
    let now = NOW;
    const { created } = rotateKey(writer, old.id, () => now, { overlapMs: 7 * 86_400_000 });
    const verifier = new KeyVerifier(() => now);
    expect(verifier.verify(old.key, session(50)).id).toBe(old.id);
    expect(verifier.verify(created.key, session(50)).id).toBe(created.id);
    now = NOW + 7 * 86_400_000 - 1_000;
    expect(verifier.verify(old.key, session(50)).id).toBe(old.id);
    now = NOW + 7 * 86_400_000;
    expect(codeOf(() => verifier.verify(old.key, session(50)))).toBe('expired_api_key');
    expect(verifier.verify(created.key, session(50)).id).toBe(created.id);
  });

  it('finds a key added after the first check once the session generation changes', () => {
    const verifier = new KeyVerifier(clock);
    expect(verifier.verify(active.key, session(10)).id).toBe(active.id);
    const added = createKey(writer, 'New Partner', clock);
    // Same generation: the table is not read again (one map lookup per request)...
    expect(codeOf(() => verifier.verify(added.key, session(10)))).toBe('invalid_api_key');
    // ...a new generation reads it again.
    expect(verifier.verify(added.key, session(11)).id).toBe(added.id);
  });

  it('refuses a key revoked meanwhile once the generation changes', () => {
    const verifier = new KeyVerifier(clock);
    const doomed = createKey(writer, 'Doomed Partner', clock);
    expect(verifier.verify(doomed.key, session(20)).id).toBe(doomed.id);
    revokeKey(writer, doomed.id, clock);
    expect(codeOf(() => verifier.verify(doomed.key, session(21)))).toBe('revoked_api_key');
  });

  it('with a KeysStore, sees a key committed by another connection from the next turn', async () => {
    const store = new KeysStore(path, 5_000, memoryLogger().logger);
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    try {
      const verifier = new KeyVerifier(clock);
      expect(verifier.verify(active.key, store.session()).id).toBe(active.id);
      const added = createKey(writer, 'Late Partner', clock);
      await nextTurn();
      expect(verifier.verify(added.key, store.session()).id).toBe(added.id);
      revokeKey(writer, added.id, clock);
      await nextTurn();
      expect(codeOf(() => verifier.verify(added.key, store.session()))).toBe('revoked_api_key');
    } finally {
      store.close();
    }
  });
});

describe('KeyVerifier.stats', () => {
  it('counts refusals by reason, and nothing for accepted keys', () => {
    const dir = tempDir('key-stats-test-');
    const path = dir.path('keys.db');
    const writer = openKeysWriter(path, { busyTimeoutMs: 5_000, create: true }).db;
    const store = new KeysStore(path, 5_000, memoryLogger().logger);
    try {
      const clock = () => Date.parse('2026-11-01T12:00:00Z');
      const good = createKey(writer, 'Good', clock);
      const gone = createKey(writer, 'Gone', clock);
      revokeKey(writer, gone.id, clock);
      const verifier = new KeyVerifier(clock);
      const attempt = (header: string | undefined) => {
        try {
          verifier.verify(header, store.session());
        } catch {
          // Counted below.
        }
      };
      for (const header of [good.key, good.key, undefined, 'nope', generateKey(), gone.key, gone.key]) attempt(header);
      expect(verifier.stats()).toEqual({
        refused: { missing_api_key: 1, invalid_api_key: 2, revoked_api_key: 2, expired_api_key: 0 },
      });
      expect(store.probe().generation).toBeGreaterThan(0);
    } finally {
      store.close();
      writer.$client.close();
      dir.cleanup();
    }
  });
});
