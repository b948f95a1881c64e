import Database from 'better-sqlite3';
import { closeSync, existsSync, openSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayPrefix, generateKey, hashKey } from '../../src/keys/format.js';
import { tempDir } from '../support/snapshot-fixture.js';
import { cliJson, expectOneLineFailure, readRows, type CreatedJson } from '../support/keys-helpers.js';
import { runCli } from '../support/run-node.js';

/*
 * The keys CLI's output going nowhere: piped into a reader that stops early
 * (`keys list | head -2`), or into a file that cannot be written. The command's work is done
 * before anything is printed, so a closed pipe is not a failure.
 */

const dir = tempDir('keys-closed-output-');
const keysPath = dir.path('keys.db');
const env = { DATABASE_PATH: dir.path('snapshot.db') };
let first: CreatedJson;

beforeAll(async () => {
  expect((await runCli(['init'], keysPath, env)).code).toBe(0);
  first = await cliJson<CreatedJson>(['create', '--partner', 'First Partner'], keysPath, env);
  // Far more output than a pipe holds (64 KiB) plus what a reader takes in one read, so `list`
  // is still printing when its reader goes away.
  const db = new Database(keysPath);
  try {
    const insert = db.prepare('INSERT INTO api_keys (partner, prefix, hash, created_at) VALUES (?, ?, ?, ?)');
    db.transaction(() => {
      for (let i = 0; i < 2_000; i += 1) {
        const key = generateKey();
        insert.run(`Partner ${i} ${'x'.repeat(150)}`, displayPrefix(key), hashKey(key), '2026-01-01T00:00:00Z');
      }
    })();
  } finally {
    db.close();
  }
});

afterAll(() => dir.cleanup());

describe('keys commands whose reader closes stdout early', () => {
  it('list piped into a reader that stops after one line exits 0 with nothing on stderr', async () => {
    const result = await runCli(['list'], keysPath, env, { closeStdout: 'after-first-line' });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ID +PARTNER/);
  });

  const commands: [string, () => string[]][] = [
    ['list', () => ['list']],
    ['list --json', () => ['list', '--json']],
    ['set-rate', () => ['set-rate', String(first.id), '600']],
    ['revoke', () => ['revoke', String(first.id)]],
    ['init', () => ['init']],
    ['backup', () => ['backup', dir.path('backup.db')]],
    ['restore', () => ['restore', dir.path('backup.db')]],
    ['--help', () => ['--help']],
  ];
  // create and rotate first: revoke (below) revokes the first key, which rotate needs live.
  const showingANewKey: [string, () => string[], RegExp][] = [
    ['create', () => ['create', '--partner', 'Quiet Partner'], /^the new key (\d+) \(Quiet Partner\) could not be shown/],
    ['rotate', () => ['rotate', String(first.id), '--overlap', '1d'], /^the new key (\d+) \(First Partner\) could not be shown/],
  ];
  for (const [name, args, line] of showingANewKey) {
    it(`${name} with stdout closed before it prints the new key says so in one line (revoke it, create another), exit 1`, async () => {
      const result = await runCli(args(), keysPath, env, { closeStdout: 'at-start' });
      const said = expectOneLineFailure(result);
      expect(said).toMatch(line);
      expect(said).toContain(`revoke ${line.exec(said)![1]}`);
    });
  }

  for (const [name, args] of commands) {
    it(`${name} with stdout closed before it prints exits 0 with nothing on stderr`, async () => {
      const result = await runCli(args(), keysPath, env, { closeStdout: 'at-start' });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    });
  }

  it('still did the work of the commands whose output nobody read', () => {
    const rows = readRows<{ id: number; partner: string; revoked_at: string | null; rate_limit_per_minute: number | null; replaced_by: number | null }>(keysPath);
    const firstRow = rows.find((r) => r.id === first.id)!;
    expect(firstRow.revoked_at).not.toBeNull();
    expect(firstRow.rate_limit_per_minute).toBe(600);
    expect(firstRow.replaced_by).not.toBeNull();
    expect(rows.some((r) => r.partner === 'Quiet Partner')).toBe(true);
    expect(existsSync(dir.path('backup.db'))).toBe(true);
  });
});

// Skipped only on a system without /dev/full (not Linux): it is the one portable way to make a
// write fail with ENOSPC without filling a disk. Every Linux machine, CI's included, has it.
describe.skipIf(!existsSync('/dev/full'))('keys commands whose output cannot be written', () => {
  it('list into a full device fails with one line naming the error, exit 1, no stack', async () => {
    const full = openSync('/dev/full', 'w');
    try {
      const line = expectOneLineFailure(await runCli(['list'], keysPath, env, { stdoutFd: full }));
      expect(line).toContain('ENOSPC');
    } finally {
      closeSync(full);
    }
  });
});
