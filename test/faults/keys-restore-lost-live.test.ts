import { existsSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli as runCliWith } from '../support/run-node.js';
import { tempDir } from '../support/snapshot-fixture.js';

/*
 * `keys restore` over a live keys database that is missing or unreadable (the usual reason to
 * restore): the revocations made after the backup cannot be read from it. The real CLI keeps
 * them from the revocation log `keys revoke` appends beside the database, and says loudly what
 * it cannot know; a key revoked after the backup is never let back in silently.
 */

const dir = tempDir('keys-restore-lost-');
afterAll(() => dir.cleanup());

// The machine running the suite may be shared and slow: a generous limit per command.
const runCli = (args: string[], keysPath: string, env: Record<string, string>) => runCliWith(args, keysPath, env, { timeoutMs: 60_000 });

async function cliJson<T>(args: string[], keysPath: string, env: Record<string, string>): Promise<T> {
  const result = await runCli([...args, '--json'], keysPath, env);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
}

interface KeyJson {
  id: number;
  status: string;
}

async function setUp(name: string): Promise<{ keysPath: string; env: Record<string, string>; revoked: number; kept: number; backup: string }> {
  const keysPath = dir.path(`${name}/keys.db`);
  const env = { KEYS_DATABASE_PATH: keysPath, DATABASE_PATH: dir.path(`${name}/snapshot.db`) };
  const a = await cliJson<{ id: number }>(['create', '--partner', 'Acme', '--create'], keysPath, env);
  const b = await cliJson<{ id: number }>(['create', '--partner', 'Beta'], keysPath, env);
  const backup = dir.path(`${name}/backup.db`);
  expect((await runCli(['backup', backup], keysPath, env)).code).toBe(0);
  // Revoked after the backup: the backup has it active.
  expect((await runCli(['revoke', String(a.id)], keysPath, env)).code).toBe(0);
  return { keysPath, env, revoked: a.id, kept: b.id, backup };
}

function removeLive(keysPath: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(keysPath + suffix, { force: true });
}

describe("keys restore over a lost live database", { timeout: 180_000 }, () => {
  it('missing: the key revoked after the backup stays revoked (from the revocation log), and the output says what it could not know', async () => {
    const { keysPath, env, revoked, kept, backup } = await setUp('missing');
    removeLive(keysPath);
    const result = await runCli(['restore', backup], keysPath, env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^WARNING: the keys database being replaced was missing: revocations made after the backup were read from the revocation log/m);
    expect(result.stdout).toMatch(/Kept 1 revocation made after the backup/);
    const list = await cliJson<KeyJson[]>(['list'], keysPath, env);
    expect(list.find((k) => k.id === revoked)!.status).toBe('revoked');
    expect(list.find((k) => k.id === kept)!.status).toBe('active');
  });

  it('missing and no revocation log: it warns, loudly, that every key revoked after the backup is active again', async () => {
    const { keysPath, env, backup } = await setUp('no-log');
    removeLive(keysPath);
    rmSync(`${keysPath}.revocations`, { force: true });
    const result = await runCli(['restore', backup, '--json'], keysPath, env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^WARNING: the keys database being replaced was missing and there is no revocation log .*every key revoked after the backup is active again/m);
    const json = JSON.parse(result.stdout) as { live_database: string; warning: string };
    expect(json.live_database).toBe('missing');
    expect(json.warning).toMatch(/revoke again any key that must not work/);
    expect(existsSync(keysPath)).toBe(true);
  });
});
