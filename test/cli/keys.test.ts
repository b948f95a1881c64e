import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi } from '../support/api.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import type { CreatedJson } from '../support/keys-helpers.js';
import { lines, runCli, type RunResult } from '../support/run-node.js';

/*
 * The editors' key tool, run as editors run it: a real `node dist/src/cli/keys.js` process over
 * a real SQLite file, with nothing in its environment but PATH and the variables under test.
 */

const KEY_LINE = /^lsk_[0-9A-Za-z]{32}$/;
const UTC_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

const dirs: { cleanup: () => void }[] = [];
afterAll(() => dirs.forEach((d) => d.cleanup()));

function freshDir() {
  const dir = tempDir('keys-cli-test-');
  dirs.push(dir);
  return dir;
}

interface KeyRow {
  id: number;
  partner: string;
  prefix: string;
  hash: string;
  created_at: string;
  revoked_at: string | null;
  expires_at: string | null;
  last_used_at: string | null;
  rate_limit_per_minute: number | null;
  replaced_by: number | null;
}

async function createJson(databasePath: string, partner: string, ...more: string[]): Promise<CreatedJson> {
  const result = await runCli(['create', '--partner', partner, '--json', '--create', ...more], databasePath);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as CreatedJson;
}

function readKeys(databasePath: string): KeyRow[] {
  const db = new Database(databasePath, { readonly: true });
  try {
    return db.prepare('SELECT * FROM api_keys ORDER BY id').all() as KeyRow[];
  } finally {
    db.close();
  }
}

/** The bytes of the database file and its -wal / -shm companions, whichever exist. */
function databaseBytes(databasePath: string): Buffer {
  const name = basename(databasePath);
  const files = readdirSync(dirname(databasePath)).filter((f) => f.startsWith(name));
  expect(files).toContain(name);
  return Buffer.concat(files.map((f) => readFileSync(join(dirname(databasePath), f))));
}

/** The usage-error contract: exit 1, nothing on stdout, exactly one line on stderr, no stack. */
function expectOneLineFailure(result: RunResult): string {
  expect(result.timedOut).toBe(false);
  expect(result.code).toBe(1);
  expect(result.stdout).toBe('');
  expect(result.stderr.trim()).not.toBe('');
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stderr).not.toMatch(/\.(js|ts):\d+/);
  return result.stderr.trim();
}

describe('keys create', () => {
  it('refuses to create a keys database it did not expect: one line naming the path, exit 1, no file made', async () => {
    const dir = freshDir();
    const databasePath = dir.path('mistyped/keys.db');
    for (const args of [['create', '--partner', 'Acme Media'], ['list'], ['revoke', '1'], ['rotate', '1'], ['set-rate', '1', '10']]) {
      const message = expectOneLineFailure(await runCli(args, databasePath));
      expect(message, args.join(' ')).toContain(databasePath);
      expect(message).toMatch(/keys -- init/);
    }
    expect(existsSync(dirname(databasePath))).toBe(false);
  });

  it('with --create prints the new key once on its own line, exits 0, and creates the missing database file and folder', async () => {
    const dir = freshDir();
    const databasePath = dir.path('not/yet/there/keys.db');
    expect(existsSync(dirname(databasePath))).toBe(false);

    const result = await runCli(['create', '--partner', 'Acme Media', '--create'], databasePath);

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const keyLines = lines(result.stdout).filter((line) => KEY_LINE.test(line));
    expect(keyLines).toHaveLength(1);
    const key = keyLines[0]!;
    // Shown once: the key appears in exactly one place in the output.
    expect(result.stdout.split(key)).toHaveLength(2);
    expect(existsSync(databasePath)).toBe(true);
    const rows = readKeys(databasePath);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.partner).toBe('Acme Media');
  });

  it('stores only the SHA-256 hash: the key appears nowhere in the database, its WAL or its columns', async () => {
    const dir = freshDir();
    const databasePath = dir.path('keys.db');
    const created = await createJson(databasePath, 'Acme Media');
    const expectedHash = createHash('sha256').update(created.key, 'utf8').digest('hex');

    const rows = readKeys(databasePath);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row.hash).toBe(expectedHash);
    expect(row.prefix).toBe(created.key.slice(0, 8));
    for (const value of Object.values(row)) {
      expect(String(value)).not.toContain(created.key);
      expect(String(value)).not.toContain(created.key.slice(8));
    }

    // The CLI exits without checkpointing, so the row may still be in the -wal file: read both.
    const bytes = databaseBytes(databasePath);
    expect(bytes.includes(Buffer.from(expectedHash))).toBe(true);
    expect(bytes.includes(Buffer.from(created.key))).toBe(false);
    // Not even the part of the key that listings never show.
    expect(bytes.includes(Buffer.from(created.key.slice(8)))).toBe(false);
  });

  it('with --json prints exactly {"id","partner","key","created_at","expires_at","rate_limit_per_minute"} and nothing else', async () => {
    const dir = freshDir();
    const databasePath = dir.path('keys.db');
    const result = await runCli(['create', '--partner', 'Acme Media', '--json', '--create'], databasePath);

    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(lines(result.stdout)).toHaveLength(1);
    const body = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['created_at', 'expires_at', 'id', 'key', 'partner', 'rate_limit_per_minute']);
    expect(body.expires_at).toBeNull();
    expect(body.rate_limit_per_minute).toBeNull();
    expect(body.partner).toBe('Acme Media');
    expect(body.key).toMatch(KEY_LINE);
    expect(body.created_at).toMatch(UTC_SECONDS);
    expect(body.id).toBe(readKeys(databasePath)[0]!.id);
  });

  it('gives every key a different value and a created_at in whole UTC seconds at the time of creation', async () => {
    const dir = freshDir();
    const databasePath = dir.path('keys.db');
    const before = Math.floor(Date.now() / 1000) * 1000;
    const first = await createJson(databasePath, 'Acme Media');
    const second = await createJson(databasePath, 'Acme Media');
    const after = Date.now();

    expect(first.key).not.toBe(second.key);
    expect(first.id).not.toBe(second.id);
    for (const created of [first, second]) {
      expect(created.created_at).toMatch(UTC_SECONDS);
      const at = Date.parse(created.created_at);
      expect(at).toBeGreaterThanOrEqual(before);
      expect(at).toBeLessThanOrEqual(after);
    }
    expect(readKeys(databasePath).map((r) => r.created_at)).toEqual([first.created_at, second.created_at]);
  });

  it('trims the partner name before storing it', async () => {
    const dir = freshDir();
    const databasePath = dir.path('keys.db');
    const created = await createJson(databasePath, '  Acme Media  ');
    expect(created.partner).toBe('Acme Media');
    expect(readKeys(databasePath)[0]!.partner).toBe('Acme Media');
  });
});

describe('keys list', () => {
  it('shows id, partner, prefix, created and revoked for each key, and never a key', async () => {
    const dir = freshDir();
    const databasePath = dir.path('keys.db');
    const acme = await createJson(databasePath, 'Acme Media');
    const globex = await createJson(databasePath, 'Globex News');
    expect((await runCli(['revoke', String(acme.id)], databasePath)).code).toBe(0);
    const revokedAt = readKeys(databasePath)[0]!.revoked_at!;

    const result = await runCli(['list'], databasePath);

    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const [header, ...rows] = lines(result.stdout);
    for (const column of ['ID', 'PARTNER', 'PREFIX', 'STATUS', 'CREATED', 'EXPIRES', 'LAST USED', 'RATE', 'REVOKED']) {
      expect(header).toContain(column);
    }
    expect(rows).toHaveLength(2);
    const acmeRow = rows.find((r) => r.includes('Acme Media'))!;
    const globexRow = rows.find((r) => r.includes('Globex News'))!;
    expect(acmeRow.split(/\s+/)[0]).toBe(String(acme.id));
    expect(acmeRow).toContain(acme.key.slice(0, 8));
    expect(acmeRow).toContain(acme.created_at);
    expect(acmeRow).toContain(revokedAt);
    expect(acmeRow).toContain('revoked');
    expect(globexRow.split(/\s+/)[0]).toBe(String(globex.id));
    expect(globexRow).toContain('active');
    expect(globexRow).toContain('never');
    expect(globexRow).toContain('default');
    expect(globexRow).toContain(globex.key.slice(0, 8));
    expect(globexRow).toContain(globex.created_at);
    expect(globexRow.trimEnd()).toMatch(/-$/);
    for (const created of [acme, globex]) {
      expect(result.stdout).not.toContain(created.key);
      expect(result.stdout).not.toContain(created.key.slice(8));
    }
  });

  it('with --json prints an array of every key\'s fields, without the keys', async () => {
    const dir = freshDir();
    const databasePath = dir.path('keys.db');
    const acme = await createJson(databasePath, 'Acme Media');
    const globex = await createJson(databasePath, 'Globex News');
    expect((await runCli(['revoke', String(globex.id)], databasePath)).code).toBe(0);
    const revokedAt = readKeys(databasePath)[1]!.revoked_at;
    expect(revokedAt).toMatch(UTC_SECONDS);

    const result = await runCli(['list', '--json'], databasePath);

    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const body = JSON.parse(result.stdout) as Record<string, unknown>[];
    const common = { expires_at: null, last_used_at: null, rate_limit_per_minute: null, replaced_by: null };
    expect(body).toEqual([
      { id: acme.id, partner: 'Acme Media', prefix: acme.key.slice(0, 8), status: 'active', created_at: acme.created_at, revoked_at: null, ...common },
      { id: globex.id, partner: 'Globex News', prefix: globex.key.slice(0, 8), status: 'revoked', created_at: globex.created_at, revoked_at: revokedAt, ...common },
    ]);
    expect(result.stdout).not.toContain(acme.key);
    expect(result.stdout).not.toContain(globex.key);
  });

  it('says there are no keys yet when the table is empty (and --json prints [])', async () => {
    const dir = freshDir();
    const databasePath = dir.path('keys.db');
    expect((await runCli(['init'], databasePath)).code).toBe(0);

    const text = await runCli(['list'], databasePath);
    expect(text.code).toBe(0);
    expect(text.stderr).toBe('');
    expect(lines(text.stdout)).toHaveLength(1);
    expect(text.stdout).toMatch(/no keys/i);

    const json = await runCli(['list', '--json'], databasePath);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([]);
  });
});

describe('keys revoke', () => {
  it('exits 0 and sets revoked_at; revoking again exits 0, says "already revoked" and keeps the first time', async () => {
    const dir = freshDir();
    const databasePath = dir.path('keys.db');
    const acme = await createJson(databasePath, 'Acme Media');
    const other = await createJson(databasePath, 'Globex News');

    const first = await runCli(['revoke', String(acme.id)], databasePath);
    expect(first.code).toBe(0);
    expect(first.stderr).toBe('');
    expect(first.stdout).not.toMatch(/already revoked/i);
    const revokedAt = readKeys(databasePath).find((r) => r.id === acme.id)!.revoked_at;
    expect(revokedAt).toMatch(UTC_SECONDS);
    // Only the named key is revoked.
    expect(readKeys(databasePath).find((r) => r.id === other.id)!.revoked_at).toBeNull();

    // Let the clock pass the second, so a rewritten revoked_at would differ.
    await sleep(1_100);
    const again = await runCli(['revoke', String(acme.id)], databasePath);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe('');
    expect(again.stdout).toMatch(/already revoked/i);
    expect(again.stdout).toContain(revokedAt!);
    expect(readKeys(databasePath).find((r) => r.id === acme.id)!.revoked_at).toBe(revokedAt);
  });

  it('refuses an unknown id with one line on stderr, exit 1 and nothing on stdout', async () => {
    const dir = freshDir();
    const databasePath = dir.path('keys.db');
    await createJson(databasePath, 'Acme Media');
    const message = expectOneLineFailure(await runCli(['revoke', '999'], databasePath));
    expect(message).toContain('999');
    expect(readKeys(databasePath)[0]!.revoked_at).toBeNull();
  });
});

describe('usage errors', () => {
  const dir = freshDir();
  const databasePath = dir.path('keys.db');
  beforeAll(async () => {
    expect((await runCli(['init'], databasePath)).code).toBe(0);
  });

  it.each([
    ['revoke with an id that is not a number', ['revoke', 'abc']],
    ['revoke without an id', ['revoke']],
    ['create without --partner', ['create']],
    ['create with a blank partner', ['create', '--partner', '   ']],
    ['an unknown command', ['rename']],
    ['rotate without an id', ['rotate']],
    ['rotate an unknown key', ['rotate', '42']],
    ['rotate with a bad overlap', ['rotate', '1', '--overlap', '7 days']],
    ['create with a bad expiry', ['create', '--partner', 'Acme', '--expires-in', '90']],
    ['create with a zero expiry', ['create', '--partner', 'Acme', '--expires-in', '0d']],
    ['create with a bad rate', ['create', '--partner', 'Acme', '--rate', '-5']],
    ['create with a zero rate', ['create', '--partner', 'Acme', '--rate', '0']],
    ['set-rate without a rate', ['set-rate', '1']],
    ['set-rate with a word', ['set-rate', '1', 'fast']],
    ['backup without a file', ['backup']],
    ['restore a file that does not exist', ['restore', '/nonexistent/backup.db']],
    ['an unknown option', ['list', '--all']],
    ['no command at all', []],
  ])('%s: exactly one line on stderr, exit 1, no stack trace, nothing created', async (_name, args) => {
    expectOneLineFailure(await runCli(args, databasePath));
    expect(readKeys(databasePath)).toEqual([]);
  });
});

describe('the CLI and a running API over the same file', () => {
  it('refuses a key revoked by the CLI on the very next request, with no restart', async () => {
    const dir = freshDir();
    const databasePath = dir.path('snapshot.db');
    const keysPath = dir.path('keys.db');
    buildSnapshot(databasePath, {
      sections: [rawSection({ slug: 'fiber' })],
      articles: [rawArticle({ slug: 'a-story', section_slug: 'fiber' })],
    });
    const api = await startApi({ databasePath });
    try {
      // The API is already running when the key is created.
      const created = await createJson(keysPath, 'Acme Media');
      const ok = await api.request.get('/api/v1/articles').set('X-API-Key', created.key);
      expect(ok.status).toBe(200);

      const revoke = await runCli(['revoke', String(created.id)], keysPath);
      expect(revoke.code).toBe(0);

      const refused = await api.request.get('/api/v1/articles').set('X-API-Key', created.key);
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe('revoked_api_key');
      // And the key never reached the API's log.
      expect(api.logs.join('\n')).not.toContain(created.key);
    } finally {
      await api.close();
    }
  });
});

describe('the CLI and a concurrent writer', () => {
  it('waits for another connection holding the write lock, then succeeds, and both writes are kept', async () => {
    const dir = freshDir();
    const databasePath = dir.path('keys.db');
    // Create and migrate the file first, so the other connection can write to api_keys.
    expect((await runCli(['init'], databasePath)).code).toBe(0);

    const other = new Database(databasePath);
    let committedAt = 0;
    try {
      other.pragma('journal_mode = WAL');
      other.exec('BEGIN IMMEDIATE');
      other
        .prepare('INSERT INTO api_keys (partner, prefix, hash, created_at) VALUES (?, ?, ?, ?)')
        .run('Concurrent Writer', 'lsk_abcd', 'f'.repeat(64), '2026-01-01T00:00:00Z');
      const cli = runCli(['create', '--partner', 'Acme Media', '--json'], databasePath);
      await sleep(1_000);
      committedAt = Date.now();
      other.exec('COMMIT');
      const result = await cli;

      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout).partner).toBe('Acme Media');
      // It really waited for the lock rather than finishing before it was taken.
      expect(result.endedAt).toBeGreaterThanOrEqual(committedAt);
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }
    expect(readKeys(databasePath).map((r) => r.partner)).toEqual(['Concurrent Writer', 'Acme Media']);
  });
});

describe('environment problems', () => {
  it('reports a database path in an unwritable place (under /proc) in one line, exit 1', async () => {
    const result = await runCli(['init'], '/proc/nope/x.db', {}, { timeoutMs: 10_000 });
    expect(result.timedOut, 'the CLI hung instead of failing').toBe(false);
    expectOneLineFailure(result);
  });

  it('reports a database path under a regular file in one line, exit 1', async () => {
    const dir = freshDir();
    writeFileSync(dir.path('a-file'), 'not a folder');
    const message = expectOneLineFailure(await runCli(['init'], dir.path('a-file/keys.db')));
    expect(message).toContain(dir.path('a-file/keys.db'));
  });

  it('reports an invalid configuration value in one line naming the variable, exit 1, without touching the database', async () => {
    const dir = freshDir();
    const databasePath = dir.path('keys.db');
    const message = expectOneLineFailure(
      await runCli(['create', '--partner', 'Acme Media', '--create'], databasePath, { DATABASE_BUSY_TIMEOUT_MS: 'abc' }),
    );
    expect(message).toContain('DATABASE_BUSY_TIMEOUT_MS');
    expect(existsSync(databasePath)).toBe(false);
  });
});
