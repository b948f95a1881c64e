import Database from 'better-sqlite3';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeysStore } from '../../src/db/keys/keys-store.js';
import { displayPrefix, generateKey, hashKey } from '../../src/keys/format.js';
import { KeyVerifier } from '../../src/keys/verifier.js';
import { formatUtcSeconds } from '../../src/lib/time.js';
import { expectError } from '../support/contract-helpers.js';
import { memoryLogger, startApi, testClock, type TestApi } from '../support/api.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { cliJson, expectOneLineFailure, readRows, type CreatedJson, type SummaryJson } from '../support/keys-helpers.js';
import { lines, runCli } from '../support/run-node.js';

/*
 * The key lifecycle through the real CLI process, checked against the real API: the move of
 * keys out of old snapshots, expiry, rotation with overlap, per-key rates, last-used times.
 */

const DAY = 86_400_000;
const dirs: { cleanup: () => void }[] = [];
const apis: TestApi[] = [];
afterAll(async () => {
  for (const api of apis) await api.close();
  dirs.forEach((d) => d.cleanup());
});

/** A folder with a synced snapshot (snapshot.db) and the path of its keys database (keys.db). */
function setup() {
  const dir = tempDir('keys-lifecycle-');
  dirs.push(dir);
  const snapshot = dir.path('snapshot.db');
  buildSnapshot(snapshot, {
    sections: [rawSection({ slug: 'fiber' })],
    articles: [rawArticle({ slug: 'a-story', section_slug: 'fiber', published_at: '2026-01-01T00:00:00Z' })],
  });
  return { dir, snapshot, keys: dir.path('keys.db') };
}

async function api(snapshot: string, at: number): Promise<TestApi & { clock: ReturnType<typeof testClock> }> {
  const clock = testClock(at);
  const started = await startApi({ databasePath: snapshot, clock });
  apis.push(started);
  return Object.assign(started, { clock });
}

const get = (a: TestApi, key: string) => a.request.get('/api/v1/articles').set('X-API-Key', key);
const list = (keys: string) => cliJson<SummaryJson[]>(['list'], keys);
const create = (keys: string, partner: string, ...more: string[]) =>
  cliJson<CreatedJson>(['create', '--partner', partner, '--create', ...more], keys);

describe('keys init: moving keys out of an existing snapshot', () => {
  const LEGACY = [generateKey(), generateKey(), generateKey()];
  let env: ReturnType<typeof setup>;
  let legacyRows: unknown[];

  beforeAll(() => {
    env = setup();
    // Keys as the CLI of the previous version stored them: in the snapshot's api_keys table.
    const sqlite = new Database(env.snapshot);
    try {
      const insert = sqlite.prepare('INSERT INTO api_keys (id, partner, prefix, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)');
      insert.run(3, 'Acme Media', displayPrefix(LEGACY[0]!), hashKey(LEGACY[0]!), '2026-01-01T00:00:00Z', null);
      insert.run(5, 'Globex News', displayPrefix(LEGACY[1]!), hashKey(LEGACY[1]!), '2026-02-01T00:00:00Z', '2026-03-01T00:00:00Z');
      insert.run(6, 'Initech', displayPrefix(LEGACY[2]!), hashKey(LEGACY[2]!), '2026-02-02T00:00:00Z', null);
    } finally {
      sqlite.close();
    }
    legacyRows = readRows(env.snapshot);
  });

  it('the API ignores the snapshot\'s old table: without a keys database every request is a 503, never a 401', async () => {
    const a = await api(env.snapshot, Date.now());
    for (const key of [LEGACY[0]!, generateKey()]) expectError(await get(a, key), 503, 'service_unavailable');
  });

  it('init creates the keys database and imports every key, hashes only, with its id and revocation', async () => {
    const result = await cliJson<Record<string, unknown>>(['init'], env.keys);
    expect(result).toEqual({ path: env.keys, created: true, snapshot_path: env.snapshot, snapshot_found: true, imported: 3, already_present: 0, revocations_applied: 0 });
    const rows = readRows<{ id: number; partner: string; hash: string; revoked_at: string | null }>(env.keys);
    expect(rows.map((r) => [r.id, r.partner, r.hash, r.revoked_at])).toEqual([
      [3, 'Acme Media', hashKey(LEGACY[0]!), null],
      [5, 'Globex News', hashKey(LEGACY[1]!), '2026-03-01T00:00:00Z'],
      [6, 'Initech', hashKey(LEGACY[2]!), null],
    ]);
    // The snapshot is read, never written: its old table stays as it was.
    expect(readRows(env.snapshot)).toEqual(legacyRows);

    const a = await api(env.snapshot, Date.now());
    expect((await get(a, LEGACY[0]!)).status).toBe(200);
    expectError(await get(a, LEGACY[1]!), 401, 'revoked_api_key');
  });

  it('init again imports nothing and never undoes a revocation made in the keys database since', async () => {
    expect((await runCli(['revoke', '6'], env.keys)).code).toBe(0);
    const again = await cliJson<Record<string, unknown>>(['init'], env.keys);
    expect(again).toEqual({ path: env.keys, created: false, snapshot_path: env.snapshot, snapshot_found: true, imported: 0, already_present: 3, revocations_applied: 0 });
    const text = await runCli(['init'], env.keys);
    expect(text.code).toBe(0);
    expect(lines(text.stdout)).toEqual([
      `Keys database already there at ${env.keys}.`,
      `Imported 0 keys from the snapshot at ${env.snapshot} (3 already there).`,
    ]);
    expect((await list(env.keys)).map((k) => [k.id, k.status])).toEqual([[3, 'active'], [5, 'revoked'], [6, 'revoked']]);
    const a = await api(env.snapshot, Date.now());
    expectError(await get(a, LEGACY[2]!), 401, 'revoked_api_key');
  });

  it('init again applies a revocation made meanwhile with the old CLI in the snapshot, and takes over a key it created', async () => {
    // During the switch an editor used the previous version's CLI: it revoked key 3 and created
    // a key, both in the snapshot's old table, which the new API never reads.
    const added = generateKey();
    const sqlite = new Database(env.snapshot);
    sqlite.prepare(`UPDATE api_keys SET revoked_at = '2026-04-01T00:00:00Z' WHERE id = 3`).run();
    sqlite
      .prepare('INSERT INTO api_keys (id, partner, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(7, 'Late Partner', displayPrefix(added), hashKey(added), '2026-04-01T00:00:00Z');
    sqlite.close();
    legacyRows = readRows(env.snapshot);
    const a = await api(env.snapshot, Date.now());
    expect((await get(a, LEGACY[0]!)).status).toBe(200);

    const text = await runCli(['init'], env.keys);
    expect(text.code, text.stderr).toBe(0);
    expect(lines(text.stdout)).toEqual([
      `Keys database already there at ${env.keys}.`,
      `Imported 1 key from the snapshot at ${env.snapshot} (3 already there).`,
      'Revoked 1 key that the snapshot had revoked since (a revocation is never undone).',
    ]);
    expectError(await get(a, LEGACY[0]!), 401, 'revoked_api_key');
    expect((await get(a, added)).status).toBe(200);
    expect(readRows(env.snapshot)).toEqual(legacyRows);
    const rows = readRows<{ id: number; revoked_at: string | null }>(env.keys);
    expect(rows.map((r) => [r.id, r.revoked_at])).toEqual([
      [3, '2026-04-01T00:00:00Z'],
      [5, '2026-03-01T00:00:00Z'],
      [6, expect.any(String)],
      [7, null],
    ]);
    // Run again: nothing more to do, and key 6 stays revoked though the snapshot never revoked it.
    expect(await cliJson(['init'], env.keys)).toMatchObject({ imported: 0, already_present: 4, revocations_applied: 0 });
    expectError(await get(a, LEGACY[2]!), 401, 'revoked_api_key');
  });

  it('init with no snapshot at DATABASE_PATH says so, naming the path, rather than "imported 0 keys" (a new installation, or a typo)', async () => {
    const other = setup();
    const mistyped = other.dir.path('snapshot-typo.db');
    const text = await runCli(['init'], other.keys, { DATABASE_PATH: mistyped });
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(lines(text.stdout)).toEqual([
      `Keys database created at ${other.keys}.`,
      `No snapshot at ${mistyped} (DATABASE_PATH): nothing to import. Right for a new installation; when upgrading, fix DATABASE_PATH and run init again.`,
    ]);
    expect(await cliJson(['init'], other.keys, { DATABASE_PATH: mistyped })).toEqual({
      path: other.keys,
      created: false,
      snapshot_path: mistyped,
      snapshot_found: false,
      imported: 0,
      already_present: 0,
      revocations_applied: 0,
    });
    // Nothing was made at the mistyped path: the CLI only ever reads the snapshot.
    expect(existsSync(mistyped)).toBe(false);
  });

  it('create --create on a new keys database takes the snapshot\'s keys over too, with new ids after theirs', async () => {
    const other = setup();
    const sqlite = new Database(other.snapshot);
    sqlite
      .prepare('INSERT INTO api_keys (id, partner, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(1, 'Acme Media', displayPrefix(LEGACY[0]!), hashKey(LEGACY[0]!), '2026-01-01T00:00:00Z');
    sqlite.close();
    const created = await create(other.keys, 'Newcomer');
    expect(created.id).toBe(2);
    expect((await list(other.keys)).map((k) => k.partner)).toEqual(['Acme Media', 'Newcomer']);
  });

  it('init over a snapshot it cannot read says so in one line, and imports once it can', async () => {
    const other = setup();
    const good = readFileSync(other.snapshot);
    writeFileSync(other.snapshot, 'garbage, not a database; '.repeat(200));
    const message = expectOneLineFailure(await runCli(['init'], other.keys));
    expect(message).toContain(other.snapshot);
    expect(message).toContain('DATABASE_PATH');
    writeFileSync(other.snapshot, good);
    const sqlite = new Database(other.snapshot);
    sqlite
      .prepare('INSERT INTO api_keys (partner, prefix, hash, created_at) VALUES (?, ?, ?, ?)')
      .run('Acme Media', displayPrefix(LEGACY[0]!), hashKey(LEGACY[0]!), '2026-01-01T00:00:00Z');
    sqlite.close();
    expect(await cliJson(['init'], other.keys)).toMatchObject({ created: false, imported: 1 });
  });

  it('refuses a KEYS_DATABASE_PATH that points at the snapshot, and leaves the snapshot alone', async () => {
    const before = readRows(env.snapshot, 'SELECT * FROM __drizzle_migrations');
    for (const args of [['list'], ['init'], ['create', '--partner', 'X', '--create']]) {
      const message = expectOneLineFailure(await runCli(args, env.snapshot));
      expect(message).toMatch(/not a keys database/);
    }
    expect(readRows(env.snapshot, 'SELECT * FROM __drizzle_migrations')).toEqual(before);
    expect(readRows(env.snapshot)).toEqual(legacyRows);
  });
});

describe('expiry', () => {
  it('create --expires-in 90d: the key works until that second, then answers 401 expired_api_key', async () => {
    const env = setup();
    const created = await create(env.keys, 'Acme Media', '--expires-in', '90d');
    expect(Date.parse(created.expires_at!) - Date.parse(created.created_at)).toBe(90 * DAY);
    const [listed] = await list(env.keys);
    expect(listed).toMatchObject({ id: created.id, status: 'active', expires_at: created.expires_at });

    const a = await api(env.snapshot, Date.parse(created.expires_at!) - 1_000);
    expect((await get(a, created.key)).status).toBe(200);
    a.clock.set(created.expires_at!);
    const refused = await get(a, created.key);
    expectError(refused, 401, 'expired_api_key');
    expect(refused.body.error.message).toMatch(/expired/);
  });

  it('accepts minutes, hours and weeks, and shows "never" for a key without expiry', async () => {
    const env = setup();
    for (const [value, ms] of [['30m', 30 * 60_000], ['12h', 12 * 3_600_000], ['2w', 14 * DAY]] as const) {
      const created = await create(env.keys, 'Acme Media', '--expires-in', value);
      expect(Date.parse(created.expires_at!) - Date.parse(created.created_at), value).toBe(ms);
    }
    await create(env.keys, 'Forever Partner');
    const text = await runCli(['list'], env.keys);
    expect(text.stdout.split('\n').find((l) => l.includes('Forever Partner'))).toContain('never');
  });
});

describe('rotate', () => {
  it('gives the partner a new key with the same rate; the old one works until the overlap ends, then is expired', async () => {
    const env = setup();
    const old = await create(env.keys, 'Acme Media', '--rate', '600');
    const before = Date.now();
    const { old: oldAfter, created } = await cliJson<{ old: SummaryJson; created: CreatedJson }>(
      ['rotate', String(old.id), '--overlap', '7d'],
      env.keys,
    );
    expect(created.partner).toBe('Acme Media');
    expect(created.rate_limit_per_minute).toBe(600);
    expect(created.expires_at).toBeNull();
    expect(created.key).not.toBe(old.key);
    expect(oldAfter.replaced_by).toBe(created.id);
    const overlapEnd = Date.parse(oldAfter.expires_at!);
    expect(overlapEnd).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 7 * DAY);
    expect(overlapEnd).toBeLessThanOrEqual(Date.now() + 7 * DAY);

    const a = await api(env.snapshot, overlapEnd - 60_000);
    expect((await get(a, old.key)).status).toBe(200);
    expect((await get(a, created.key)).status).toBe(200);
    a.clock.set(overlapEnd);
    expectError(await get(a, old.key), 401, 'expired_api_key');
    expect((await get(a, created.key)).status).toBe(200);
  });

  it('with --overlap 0 the old key is expired at once; list shows it expired and rotated', async () => {
    const env = setup();
    const old = await create(env.keys, 'Acme Media');
    const { created } = await cliJson<{ created: CreatedJson }>(['rotate', String(old.id), '--overlap', '0'], env.keys);
    const a = await api(env.snapshot, Date.now() + 1_000);
    expectError(await get(a, old.key), 401, 'expired_api_key');
    expect((await get(a, created.key)).status).toBe(200);
    const rows = await list(env.keys);
    expect(rows.map((k) => [k.id, k.status, k.replaced_by])).toEqual([[old.id, 'expired', created.id], [created.id, 'active', null]]);
    const text = await runCli(['list'], env.keys);
    expect(text.stdout).toContain(`rotated to ${created.id}`);
  });

  it('gives the new key the old key\'s lifetime, or --expires-in', async () => {
    const env = setup();
    const old = await create(env.keys, 'Acme Media', '--expires-in', '90d');
    const first = await cliJson<{ created: CreatedJson }>(['rotate', String(old.id)], env.keys);
    expect(Date.parse(first.created.expires_at!) - Date.parse(first.created.created_at)).toBe(90 * DAY);
    const second = await cliJson<{ created: CreatedJson }>(['rotate', String(first.created.id), '--expires-in', '30d'], env.keys);
    expect(Date.parse(second.created.expires_at!) - Date.parse(second.created.created_at)).toBe(30 * DAY);
  });

  it('refuses to rotate a revoked key or one already rotated, in one line, creating nothing', async () => {
    const env = setup();
    const revoked = await create(env.keys, 'Former Partner');
    expect((await runCli(['revoke', String(revoked.id)], env.keys)).code).toBe(0);
    const rotated = await create(env.keys, 'Acme Media');
    expect((await runCli(['rotate', String(rotated.id)], env.keys)).code).toBe(0);
    const count = (await list(env.keys)).length;
    expect(expectOneLineFailure(await runCli(['rotate', String(revoked.id)], env.keys))).toMatch(/revoked/);
    expect(expectOneLineFailure(await runCli(['rotate', String(rotated.id)], env.keys))).toMatch(/already rotated/);
    expect(await list(env.keys)).toHaveLength(count);
  });
});

describe('per-key rate', () => {
  it('create --rate and set-rate store the rate, "default" clears it, and the verifier hands it to the API', async () => {
    const env = setup();
    const created = await create(env.keys, 'Acme Media', '--rate', '600');
    expect(created.rate_limit_per_minute).toBe(600);
    const store = new KeysStore(env.keys, 1_000, memoryLogger().logger);
    const verifier = new KeyVerifier();
    try {
      expect(verifier.verify(created.key, store.session())).toEqual({ id: created.id, rateLimitPerMinute: 600 });
      const raised = await cliJson<SummaryJson>(['set-rate', String(created.id), '1200'], env.keys);
      expect(raised.rate_limit_per_minute).toBe(1200);
      expect(verifier.verify(created.key, store.session()).rateLimitPerMinute).toBe(1200);
      const reset = await cliJson<SummaryJson>(['set-rate', String(created.id), 'default'], env.keys);
      expect(reset.rate_limit_per_minute).toBeNull();
      expect(verifier.verify(created.key, store.session()).rateLimitPerMinute).toBeNull();
    } finally {
      store.close();
    }
    const text = await runCli(['set-rate', String(created.id), '90'], env.keys);
    expect(text.stdout).toContain('90/min');
    expect(expectOneLineFailure(await runCli(['set-rate', '999', '90'], env.keys))).toContain('999');
  });
});

describe('last-used time', () => {
  it('is recorded in batches: no write per request, the latest time once flushed, never for a refused key', async () => {
    const env = setup();
    const used = await create(env.keys, 'Acme Media');
    const revoked = await create(env.keys, 'Former Partner');
    expect((await runCli(['revoke', String(revoked.id)], env.keys)).code).toBe(0);
    const start = Date.parse('2026-11-01T12:00:00Z');
    const a = await api(env.snapshot, start);
    for (let i = 0; i < 5; i += 1) {
      expect((await get(a, used.key)).status).toBe(200);
      a.clock.advance(10_000);
    }
    expect((await get(a, revoked.key)).status).toBe(401);
    // Nothing written yet: the batch goes out once a minute (or on shutdown).
    expect((await list(env.keys)).map((k) => k.last_used_at)).toEqual([null, null]);
    a.keysStore.flushUsage();
    const rows = await list(env.keys);
    expect(rows.map((k) => k.last_used_at)).toEqual([formatUtcSeconds(start + 40_000), null]);
    const text = await runCli(['list'], env.keys);
    expect(text.stdout).toContain(formatUtcSeconds(start + 40_000));
  });

  it('a failed write never fails a request, and the times are written once the database is free again', async () => {
    const env = setup();
    const created = await create(env.keys, 'Acme Media');
    const at = Date.parse('2026-11-01T12:00:00Z');
    const a = await api(env.snapshot, at);
    const locker = new Database(env.keys);
    try {
      locker.exec('BEGIN IMMEDIATE');
      expect((await get(a, created.key)).status).toBe(200);
      a.keysStore.flushUsage();
      expect((await get(a, created.key)).status).toBe(200);
      expect(a.logs.join('\n')).toMatch(/could not write last-used times/);
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    a.keysStore.flushUsage();
    expect((await list(env.keys))[0]!.last_used_at).toBe(formatUtcSeconds(at));
  });
});

describe('partner names (no disguised or garbled names)', () => {
  const env = setup();

  // Every character class is covered by test/unit/keys/partner-name.test.ts; these go through the process.
  it.each([
    ['a right-to-left override', 'Acme\u202EaideM', 'U+202E'],
    ['isolates', '\u2066Acme\u2069', 'U+2066'],
    ['a zero-width space', 'Ac\u200Bme', 'U+200B'],
    ['a byte-order mark', '\uFEFFAcme', 'U+FEFF'],
    ['a newline', 'Acme\nMedia', 'U+000A'],
    ['an escape sequence', 'Acme\u001B[2J', 'U+001B'],
    ['a C1 control (CSI)', 'Acme\u009B2J', 'U+009B'],
  ])('refuses %s in one line naming the character, exit 1, storing nothing', async (_name, partner, code) => {
    const message = expectOneLineFailure(await runCli(['create', '--partner', partner, '--create'], env.keys));
    expect(message).toContain(code);
    // The message itself is plain text: the offending character is named, not echoed.
    expect(message).not.toMatch(/[\p{C}]/u);
  });

  it('stored nothing for any refused name', async () => {
    expect((await runCli(['init'], env.keys)).code).toBe(0);
    expect(await list(env.keys)).toEqual([]);
  });

  it('caps the name at 200 characters, counted as code points', async () => {
    expect((await create(env.keys, '激'.repeat(200))).partner).toBe('激'.repeat(200));
    expect(expectOneLineFailure(await runCli(['create', '--partner', 'a'.repeat(201)], env.keys))).toMatch(/200/);
    expect(expectOneLineFailure(await runCli(['create', '--partner', 'x'.repeat(100_000)], env.keys))).toMatch(/200/);
  });

  it('stores the NFC form, with runs of spaces of any kind as one space', async () => {
    expect((await create(env.keys, 'Cafe\u0301 Media')).partner).toBe('Caf\u00E9 Media');
    expect((await create(env.keys, '  Acme\u00A0\u3000 Media ')).partner).toBe('Acme Media');
  });

  it('shows a hostile name stored by an older version escaped in list, never raw', async () => {
    const sqlite = new Database(env.keys);
    sqlite
      .prepare('INSERT INTO api_keys (partner, prefix, hash, created_at) VALUES (?, ?, ?, ?)')
      .run('Evil\u202Eoc.elgoog', 'lsk_abcd', 'e'.repeat(64), '2026-01-01T00:00:00Z');
    sqlite.close();
    const text = await runCli(['list'], env.keys);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Evil\\u{202e}oc.elgoog');
    expect(text.stdout).not.toContain('\u202E');
  });
});
