import Database from 'better-sqlite3';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupDatabase } from '../../src/db/sqlite/backup.js';
import { displayPrefix, hashKey } from '../../src/keys/format.js';
import { createKey } from '../../src/keys/manage.js';
import { withKeys } from '../support/api.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { cliJson, expectOneLineFailure, readRows, type CreatedJson, type SummaryJson } from '../support/keys-helpers.js';
import { lines, runCli } from '../support/run-node.js';

/*
 * Backup and restore as an operator does them: the real CLI, the real API process, files on
 * disk. The backup is taken while the API serves and another connection writes keys.
 */

const dir = tempDir('keys-backup-');
const snapshot = dir.path('snapshot.db');
const keysPath = dir.path('keys.db');
const backupPath = dir.path('backups/keys-1.db');
const env = { DATABASE_PATH: snapshot, KEYS_DATABASE_PATH: keysPath, DATABASE_BUSY_TIMEOUT_MS: '2000' };
let server: ServerProcess | undefined;
const keys: Record<'a' | 'b' | 'c', CreatedJson> = {} as never;

beforeAll(async () => {
  buildSnapshot(snapshot, {
    sections: [rawSection({ slug: 'fiber' })],
    articles: Array.from({ length: 30 }, (_, i) =>
      rawArticle({ id: `a-${i}`, slug: `story-${i}`, section_slug: 'fiber', published_at: '2026-01-01T00:00:00Z' }),
    ),
  });
  expect((await runCli(['init'], keysPath, env)).code).toBe(0);
  for (const name of ['a', 'b', 'c'] as const) {
    keys[name] = await cliJson<CreatedJson>(['create', '--partner', `Partner ${name.toUpperCase()}`], keysPath, env);
  }
  expect((await runCli(['revoke', String(keys.b.id)], keysPath, env)).code).toBe(0);
});

afterAll(async () => {
  await server?.stop();
  dir.cleanup();
});

const status = async (key: string): Promise<number | string> => {
  const res = await fetch(`${server!.url}/api/v1/articles?limit=1`, { headers: { 'X-API-Key': key } });
  const body = (await res.json()) as { error?: { code: string } };
  return res.status === 200 ? 200 : body.error!.code;
};

describe('keys backup', () => {
  it('copies the keys database while the API serves and another connection writes; the copy is whole and consistent', async () => {
    server = await startServerProcess(env);
    let serving = true;
    const answers: (number | string)[] = [];
    const traffic = (async () => {
      while (serving) answers.push(await status(keys.a.key));
    })();
    // Another writer commits keys all along, as an editor's CLI would.
    let written = 0;
    const writer = setInterval(() => {
      withKeys(snapshot, (db) => createKey(db, `Writer ${written}`, Date.now), keysPath);
      written += 1;
    }, 5);
    let result;
    try {
      result = await cliJson<{ path: string; bytes: number }>(['backup', backupPath], keysPath, env);
    } finally {
      clearInterval(writer);
      serving = false;
      await traffic;
    }
    expect(answers.length).toBeGreaterThan(0);
    expect(new Set(answers)).toEqual(new Set([200]));
    expect(result.path).toBe(backupPath);
    expect(result.bytes).toBeGreaterThan(0);

    const copy = new Database(backupPath, { readonly: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      // One self-contained file, ready to copy off the host.
      expect(copy.pragma('journal_mode', { simple: true })).toBe('delete');
      const rows = copy.prepare('SELECT id, partner, revoked_at FROM api_keys ORDER BY id').all() as { id: number; revoked_at: string | null }[];
      // One consistent moment: the first keys, then a gapless run of the writer's.
      expect(rows.slice(0, 3).map((r) => r.id)).toEqual([keys.a.id, keys.b.id, keys.c.id]);
      expect(rows.map((r) => r.id)).toEqual(rows.map((_, i) => i + 1));
      expect(rows[1]!.revoked_at).not.toBeNull();
    } finally {
      copy.close();
    }
    // No temporary file left beside the backup.
    expect(readdirSync(dirname(backupPath))).toEqual(['keys-1.db']);
  });

  it('refuses to overwrite an existing file, and to back up a keys database that does not exist', async () => {
    expect(expectOneLineFailure(await runCli(['backup', backupPath], keysPath, env))).toContain('already exists');
    const missing = dir.path('nowhere/keys.db');
    expect(expectOneLineFailure(await runCli(['backup', dir.path('x.db')], missing, { ...env, KEYS_DATABASE_PATH: missing }))).toContain(missing);
    expect(existsSync(dir.path('x.db'))).toBe(false);
  });

  it('with --snapshot copies the snapshot the same way, while the API serves', async () => {
    const target = dir.path('backups/snapshot-1.db');
    const result = await cliJson<{ path: string }>(['backup', '--snapshot', target], keysPath, env);
    expect(result.path).toBe(target);
    expect(readRows(target, 'SELECT count(*) AS n FROM articles')).toEqual([{ n: 30 }]);
    expect(await status(keys.a.key)).toBe(200);
  });
});

describe('backupDatabase', () => {
  it('never replaces a file that appeared under the backup\'s name while it was being written', async () => {
    const target = dir.path('raced-backup.db');
    writeFileSync(target, 'the backup another editor just wrote');
    await expect(backupDatabase(keysPath, target, 2_000)).rejects.toThrow(/already exists/);
    expect(readFileSync(target, 'utf8')).toBe('the backup another editor just wrote');
  });
});

describe('keys restore', () => {
  it('after losing the keys database: restore, start the API, keys work and revocations are kept', async () => {
    expect(await status(keys.a.key)).toBe(200);
    expect(await server!.stop()).toBe(0);
    server = undefined;
    // The API wrote key A's last use when it stopped.
    const before = await cliJson<SummaryJson[]>(['list'], keysPath, env);
    expect(before.find((k) => k.id === keys.a.id)!.last_used_at).not.toBeNull();

    for (const suffix of ['', '-wal', '-shm']) rmSync(keysPath + suffix, { force: true });
    const backupRows = readRows(backupPath).length;
    const run = await runCli(['restore', backupPath, '--json'], keysPath, env);
    expect(run.code, run.stderr).toBe(0);
    // The live database was lost: the restore says what it cannot know, loudly.
    expect(run.stderr).toMatch(/^WARNING: the keys database being replaced was missing/);
    const restored = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(restored).toEqual({
      path: keysPath,
      keys: backupRows,
      revocations_kept: 0,
      keys_not_in_backup: 0,
      revoked_after_backup: [],
      not_in_backup: [],
      live_database: 'missing',
      revocations_logged: expect.any(Number),
      usage_days_carried: 0,
      warning: expect.stringMatching(/revoke again any key that must not work/),
    });
    expect(readRows(keysPath, 'PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }]);

    server = await startServerProcess(env);
    expect(await status(keys.a.key)).toBe(200);
    expect(await status(keys.b.key)).toBe('revoked_api_key');
    expect(await status(keys.c.key)).toBe(200);
  });

  it('restoring an older backup while the API runs keeps every later revocation and names the keys it lacks', async () => {
    expect((await runCli(['revoke', String(keys.c.id)], keysPath, env)).code).toBe(0);
    const late = await cliJson<CreatedJson>(['create', '--partner', 'Late Partner'], keysPath, env);
    expect(await status(late.key)).toBe(200);
    const revokedAt = readRows<{ revoked_at: string }>(keysPath, `SELECT revoked_at FROM api_keys WHERE id = ${keys.c.id}`)[0]!.revoked_at;

    const restored = await cliJson<Record<string, unknown>>(['restore', backupPath], keysPath, env);
    expect(restored).toMatchObject({ revocations_kept: 1, keys_not_in_backup: 1 });
    // Read from the database being replaced: after the restore nothing else says whose they were.
    expect(restored.revoked_after_backup).toEqual([
      { id: keys.c.id, partner: 'Partner C', prefix: displayPrefix(keys.c.key), revoked_at: revokedAt },
    ]);
    expect(restored.not_in_backup).toEqual([
      { id: late.id, partner: 'Late Partner', prefix: displayPrefix(late.key), created_at: late.created_at },
    ]);
    expect(JSON.stringify(restored)).not.toContain(late.key);
    expect(JSON.stringify(restored)).not.toContain(hashKey(late.key));
    expect(readRows(keysPath, 'PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }]);

    // The running API sees the restored database on its next request, without a restart.
    expect(await status(keys.a.key)).toBe(200);
    expect(await status(keys.b.key)).toBe('revoked_api_key');
    expect(await status(keys.c.key)).toBe('revoked_api_key');
    expect(await status(late.key)).toBe('invalid_api_key');
  });

  it('says in its text output which keys stay revoked and which are lost, by id, partner and prefix, never the key', async () => {
    const later = await cliJson<CreatedJson>(['create', '--partner', 'Later Partner'], keysPath, env);
    const text = await runCli(['restore', backupPath], keysPath, env);
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    const out = lines(text.stdout);
    expect(out[0]).toMatch(/^Restored \d+ keys into /);
    expect(out).toHaveLength(5);
    expect(out).toContainEqual('Kept 1 revocation made after the backup; still revoked:');
    expect(out).toContainEqual(expect.stringContaining(`key ${keys.c.id} (Partner C, ${displayPrefix(keys.c.key)}…), revoked `));
    expect(out).toContainEqual(expect.stringMatching(/^Not in the backup \(created after it\), so no longer working: 1 key\. Create a new key/));
    expect(out).toContainEqual(`  key ${later.id} (Later Partner, ${displayPrefix(later.key)}…), created ${later.created_at}`);
    expect(text.stdout).not.toContain(later.key);
    expect(text.stdout).not.toContain(hashKey(later.key));
  });

  it('refuses a file that is not a keys backup (the snapshot, a snapshot backup) naming the backup file, not KEYS_DATABASE_PATH, changing nothing', async () => {
    const before = readRows(keysPath);
    for (const wrong of [snapshot, dir.path('backups/snapshot-1.db')]) {
      const line = expectOneLineFailure(await runCli(['restore', wrong], keysPath, env));
      expect(line).toContain(`the backup file ${wrong} is not a keys database`);
      expect(line).toContain('"keys backup" without --snapshot');
      expect(line).not.toContain('KEYS_DATABASE_PATH');
    }
    expect(readRows(keysPath)).toEqual(before);
    expect(await status(keys.a.key)).toBe(200);
  });
});
