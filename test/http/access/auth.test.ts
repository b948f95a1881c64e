import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openKeysWriter } from '../../../src/db/keys/keys-connection.js';
import { generateKey } from '../../../src/keys/format.js';
import { createKey, revokeKey } from '../../../src/keys/manage.js';
import { addKey, keysPathFor, startApi, testClock, withKeys, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { expectError, isoPlus, MINUTE } from '../../support/contract-helpers.js';

const NOW = '2026-11-01T12:00:00Z';
const dir = tempDir();
const dbPath = dir.path('snapshot.db');
let api: TestApi;
let key: string;
let revokedKey: string;
/** Every key value this file sends, so the log check can look for each of them. */
const sentKeys: string[] = [];

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber', name: 'Fiber' })],
    articles: [rawArticle({ slug: 'hello', title: 'Laser hello', section_slug: 'fiber', published_at: isoPlus(NOW, -MINUTE) })],
  });
  key = addKey(dbPath, 'Good Partner').key;
  const revoked = addKey(dbPath, 'Former Partner');
  revokedKey = revoked.key;
  withKeys(dbPath, (db) => revokeKey(db, revoked.id, () => Date.parse(NOW)));
  sentKeys.push(key, revokedKey);
  api = await startApi({ databasePath: dbPath, clock: testClock(NOW) });
});

afterAll(async () => {
  await api.close();
  dir.cleanup();
});

const ENDPOINTS = ['/api/v1/articles', '/api/v1/articles/hello', '/api/v1/categories', '/api/v1/search?q=laser'];

/** Well-formed but unknown, and malformed keys: all `invalid_api_key`. */
const unknownKey = generateKey();
const MALFORMED = [
  'lsk_short',
  'not-a-key',
  `LSK_${'a'.repeat(32)}`,
  `lsk_${'a'.repeat(31)}`,
  `lsk_${'a'.repeat(33)}`,
  `lsk_${'a'.repeat(31)}-`,
  `lsk_${'a'.repeat(31)}é`,
  ` lsk_${'a'.repeat(16)} ${'a'.repeat(15)}`,
  'a'.repeat(36),
  `Bearer lsk_${'a'.repeat(32)}`,
];
sentKeys.push(unknownKey, ...MALFORMED.filter((k) => k.length > 8));

describe('API key', () => {
  it('accepts a valid key in X-API-Key on every endpoint', async () => {
    for (const path of ENDPOINTS) {
      const res = await api.request.get(path).set('X-API-Key', key);
      expect(res.status, path).toBe(200);
    }
  });

  it('accepts the header name in any case', async () => {
    const res = await api.request.get('/api/v1/articles').set('x-api-key', key);
    expect(res.status).toBe(200);
  });

  it('answers 401 missing_api_key without the header, on every endpoint', async () => {
    for (const path of ENDPOINTS) {
      const res = await api.request.get(path);
      expectError(res, 401, 'missing_api_key');
    }
  });

  it('answers 401 missing_api_key for an empty or blank header', async () => {
    for (const value of ['', '   ']) {
      const res = await api.request.get('/api/v1/articles').set('X-API-Key', value);
      expectError(res, 401, 'missing_api_key');
    }
  });

  it('answers 401 invalid_api_key for a well-formed key that does not exist', async () => {
    for (const path of ENDPOINTS) {
      expectError(await api.request.get(path).set('X-API-Key', unknownKey), 401, 'invalid_api_key');
    }
  });

  it.each(MALFORMED)('answers 401 invalid_api_key for the malformed key %j', async (value) => {
    const res = await api.request.get('/api/v1/articles').set('X-API-Key', value);
    expectError(res, 401, 'invalid_api_key');
  });

  it('answers 401 invalid_api_key for a valid key with a character changed', async () => {
    const last = key.at(-1) === 'A' ? 'B' : 'A';
    expectError(await api.request.get('/api/v1/articles').set('X-API-Key', key.slice(0, -1) + last), 401, 'invalid_api_key');
    expectError(await api.request.get('/api/v1/articles').set('X-API-Key', key.toUpperCase()), 401, 'invalid_api_key');
  });

  it('answers 401 revoked_api_key for a revoked key, on every endpoint', async () => {
    for (const path of ENDPOINTS) {
      expectError(await api.request.get(path).set('X-API-Key', revokedKey), 401, 'revoked_api_key');
    }
  });

  it('ignores a key in the query string: 401 missing_api_key', async () => {
    for (const name of ['api_key', 'apiKey', 'key', 'X-API-Key', 'x-api-key']) {
      const res = await api.request.get(`/api/v1/articles?${name}=${key}`);
      expectError(res, 401, 'missing_api_key');
    }
  });

  it('checks the key before the parameters: a bad key with bad parameters is a 401', async () => {
    const bad = ['/api/v1/articles?limit=0&page=-1&locale=fr', '/api/v1/search', '/api/v1/search?q=a&q=b', '/api/v1/categories?locale=xx', '/api/v1/articles/x?locale=de'];
    for (const path of bad) {
      expectError(await api.request.get(path), 401, 'missing_api_key');
      expectError(await api.request.get(path).set('X-API-Key', unknownKey), 401, 'invalid_api_key');
      expectError(await api.request.get(path).set('X-API-Key', 'garbage'), 401, 'invalid_api_key');
      expectError(await api.request.get(path).set('X-API-Key', revokedKey), 401, 'revoked_api_key');
      // With the good key the same request is a 400: the parameters are what is wrong.
      expect((await api.request.get(path).set('X-API-Key', key)).status, path).toBe(400);
    }
  });

  it('checks the key before the slug: an unknown article with a bad key is a 401, not a 404', async () => {
    expectError(await api.request.get('/api/v1/articles/does-not-exist'), 401, 'missing_api_key');
    expectError(await api.request.get('/api/v1/articles/does-not-exist').set('X-API-Key', revokedKey), 401, 'revoked_api_key');
  });
});

describe('keys changed by another process while the API runs', () => {
  it('refuses a key revoked in the database file on the very next request, and accepts one created meanwhile', async () => {
    const victim = addKey(dbPath, 'Soon Revoked');
    sentKeys.push(victim.key);
    expect((await api.request.get('/api/v1/articles').set('X-API-Key', victim.key)).status).toBe(200);

    // The CLI's path: a writer connection of its own, revokeKey, close.
    const created = withKeys(dbPath, (db) => {
      revokeKey(db, victim.id, () => Date.parse(NOW));
      return createKey(db, 'New Partner', () => Date.parse(NOW)).key;
    });
    sentKeys.push(created);

    expectError(await api.request.get('/api/v1/articles').set('X-API-Key', victim.key), 401, 'revoked_api_key');
    expect((await api.request.get('/api/v1/articles').set('X-API-Key', created)).status).toBe(200);
    // The untouched key keeps working.
    expect((await api.request.get('/api/v1/articles').set('X-API-Key', key)).status).toBe(200);
  });

  it('refuses a revocation written while the writer connection stays open', async () => {
    const victim = addKey(dbPath, 'Revoked Live');
    sentKeys.push(victim.key);
    const { db } = openKeysWriter(keysPathFor(dbPath), { busyTimeoutMs: 5_000 });
    try {
      expect((await api.request.get('/api/v1/categories').set('X-API-Key', victim.key)).status).toBe(200);
      revokeKey(db, victim.id, () => Date.parse(NOW));
      expectError(await api.request.get('/api/v1/categories').set('X-API-Key', victim.key), 401, 'revoked_api_key');
    } finally {
      db.$client.close();
    }
  });
});

describe('keys in logs', () => {
  it('never writes a key to the log, for accepted and refused requests alike', async () => {
    // Make sure every kind of request happened at least once before looking (this file's
    // other tests ran already; these cover the order-independent minimum).
    const before = api.logs.length;
    await api.request.get('/api/v1/articles').set('X-API-Key', key);
    await api.request.get('/api/v1/articles').set('X-API-Key', revokedKey);
    await api.request.get('/api/v1/articles').set('X-API-Key', unknownKey);
    await api.request.get(`/api/v1/articles?api_key=${key}`);
    await api.request.get(`/api/v1/search?q=laser&key=${unknownKey}`).set('X-API-Key', key);
    await api.request.get(`/api/v1/nope/${key}`).set('X-API-Key', key);
    // A request's line is written when its response finishes: wait for all six.
    await vi.waitFor(() => expect(api.logs.length).toBeGreaterThanOrEqual(before + 6));

    const log = api.logs.join('\n');
    for (const value of sentKeys) expect(log).not.toContain(value);
    // The key's random part alone must not appear either.
    for (const value of [key, revokedKey, unknownKey]) expect(log).not.toContain(value.slice(4));
  });

  it('logs which key id made an accepted request, so support can trace it without the key', async () => {
    const marker = `/api/v1/articles?trace=${Date.now()}`;
    await api.request.get(marker).set('X-API-Key', key);
    await vi.waitFor(() => {
      const line = api.logs.map((l) => JSON.parse(l) as { req?: { url?: string }; keyId?: unknown }).find((l) => l.req?.url === marker);
      expect(line?.keyId).toEqual(expect.any(Number));
    });
  });
});
