import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { migrations } from '../../src/db/sqlite/migrate.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { cliJson, expectOneLineFailure, readRows } from '../support/keys-helpers.js';
import { runCli } from '../support/run-node.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';

/*
 * The editors' side of key scopes, through the real CLI: create with --locales/--sections,
 * scope, list, the refusals and the warning the contract asks for, a keys database of
 * before scopes migrated forward without losing a key or a revocation, and backup/restore
 * carrying scopes.
 */

interface Scoped {
  id: number;
  key?: string;
  locales?: string[] | null;
  sections?: string[] | null;
}

const dirs: ReturnType<typeof tempDir>[] = [];
function setup(withSnapshot = true) {
  const dir = tempDir('keys-scope-');
  dirs.push(dir);
  if (withSnapshot) {
    buildSnapshot(dir.path('snapshot.db'), {
      sections: [rawSection({ slug: 'lasers' }), rawSection({ slug: 'optics' })],
      articles: [rawArticle({ section_slug: 'lasers' })],
    });
  }
  return { keys: dir.path('keys.db'), dir };
}
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.cleanup();
});

describe('keys create --locales/--sections and keys scope', () => {
  it('creates a scoped key, changes its scope, and list shows it', async () => {
    const { keys } = setup();
    const created = await cliJson<Scoped>(['create', '--partner', 'Portal', '--locales', 'zh', '--sections', 'optics,lasers', '--create'], keys);
    expect(created.locales).toEqual(['zh']);
    expect(created.sections).toEqual(['lasers', 'optics']);
    const plain = await cliJson<Scoped>(['create', '--partner', 'Everyone'], keys);
    expect('locales' in plain).toBe(false);

    const widened = await cliJson<Scoped>(['scope', String(created.id), '--all-locales'], keys);
    expect(widened.locales).toBeNull();
    expect(widened.sections).toEqual(['lasers', 'optics']);
    const narrowed = await cliJson<Scoped>(['scope', String(created.id), '--sections', 'lasers'], keys);
    expect(narrowed.sections).toEqual(['lasers']);
    const all = await cliJson<Scoped>(['scope', String(plain.id), '--locales', 'en'], keys);
    expect(all).toMatchObject({ locales: ['en'], sections: null });

    const listed = await cliJson<Scoped[]>(['list'], keys);
    expect(listed.map((k) => [k.id, k.locales, k.sections])).toEqual([
      [created.id, null, ['lasers']],
      [plain.id, ['en'], null],
    ]);
    const table = await runCli(['list'], keys);
    expect(table.stdout.split('\n')[0]).toMatch(/SCOPE$/);
    expect(table.stdout).toContain('locales all; sections lasers');
    expect(table.stdout).toContain('locales en; sections all');
    // Every change is kept, in order: what the change feed needs to follow the scope.
    const history = readRows<{ key_id: number; version: number; sections: string | null }>(
      keys,
      'SELECT key_id, version, sections FROM key_scope_changes ORDER BY key_id, version',
    );
    expect(history.map((h) => [h.key_id, h.version, h.sections])).toEqual([
      [created.id, 1, 'lasers,optics'],
      [created.id, 2, 'lasers,optics'],
      [created.id, 3, 'lasers'],
      [plain.id, 1, null],
    ]);
  });

  it('refuses an unknown locale in one line, creating nothing; accepts an unknown section with a warning', async () => {
    const { keys } = setup();
    await cliJson(['create', '--partner', 'First', '--create'], keys);
    expect(expectOneLineFailure(await runCli(['create', '--partner', 'Portal', '--locales', 'fr'], keys))).toMatch(/unknown locale "fr".*en, zh/);
    expect(expectOneLineFailure(await runCli(['scope', '1', '--locales', 'zh,de'], keys))).toMatch(/unknown locale "de"/);
    expectOneLineFailure(await runCli(['scope', '1'], keys));
    expectOneLineFailure(await runCli(['scope', '1', '--sections', 'a', '--all-sections'], keys));
    expectOneLineFailure(await runCli(['scope', '1', '--sections', 'Not A Slug'], keys));
    expectOneLineFailure(await runCli(['scope', '99', '--all-sections'], keys));
    expect(readRows(keys)).toHaveLength(1);

    const result = await runCli(['create', '--partner', 'Trade', '--sections', 'lasers,photonics-2027', '--json'], keys);
    expect(result.code).toBe(0);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/warning: .*photonics-2027/);
    expect(result.stderr).not.toMatch(/lasers/);
    expect(JSON.parse(result.stdout).sections).toEqual(['lasers', 'photonics-2027']);
    // Known sections: no warning at all.
    const quiet = await runCli(['scope', '2', '--sections', 'optics'], keys);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
  });

  it('rotate gives the new key the old key\'s scope', async () => {
    const { keys } = setup();
    const created = await cliJson<Scoped>(['create', '--partner', 'Portal', '--locales', 'zh', '--create'], keys);
    const rotated = await cliJson<{ created: Scoped }>(['rotate', String(created.id)], keys);
    expect(rotated.created).toMatchObject({ locales: ['zh'], sections: null });
  });
});

describe('the keys database of before scopes', () => {
  it('migrates forward keeping every key, revocation and the revocation log; old keys stay unscoped', async () => {
    const { dir } = setup();
    // A keys database as the previous release left it: only the first migration applied, with
    // an active key and a revoked one.
    const [first] = migrations('src/db/keys/migrations');
    const again = dir.path('old-keys.db');
    const old = new Database(again);
    old.exec('CREATE TABLE __drizzle_migrations (id INTEGER PRIMARY KEY, hash TEXT NOT NULL, created_at NUMERIC)');
    for (const statement of first!.sql) if (statement.trim()) old.exec(statement);
    old.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run(first!.hash, first!.folderMillis);
    old
      .prepare(`INSERT INTO api_keys (id, partner, prefix, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)`)
      .run(1, 'Acme', 'lsk_AAAA', 'a'.repeat(64), '2026-01-01T00:00:00Z', null);
    old
      .prepare(`INSERT INTO api_keys (id, partner, prefix, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)`)
      .run(2, 'Globex', 'lsk_BBBB', 'b'.repeat(64), '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z');
    old.close();
    const listed = await cliJson<(Scoped & { status: string; revoked_at: string | null })[]>(['list'], again);
    expect(listed.map((k) => [k.id, k.status, k.revoked_at, 'locales' in k])).toEqual([
      [1, 'active', null, false],
      [2, 'revoked', '2026-02-01T00:00:00Z', false],
    ]);
    expect(readRows(again, 'SELECT id, scope_locales, scope_sections, scope_version FROM api_keys ORDER BY id')).toEqual([
      { id: 1, scope_locales: null, scope_sections: null, scope_version: 0 },
      { id: 2, scope_locales: null, scope_sections: null, scope_version: 0 },
    ]);
    // A revocation after the migration still goes to the revocation log.
    await cliJson(['revoke', '1'], again);
    expect(readFileSync(`${again}.revocations`, 'utf8')).toContain('a'.repeat(64));
    expect(await cliJson<Scoped>(['scope', '2', '--locales', 'zh'], again)).toMatchObject({ id: 2, locales: ['zh'] });
  });
});

describe('keys backup and restore', () => {
  it('carry scopes and their history', async () => {
    const { keys, dir } = setup();
    const created = await cliJson<Scoped>(['create', '--partner', 'Portal', '--sections', 'lasers', '--create'], keys);
    const backup = dir.path('backup.db');
    await cliJson(['backup', backup], keys);
    await cliJson(['scope', String(created.id), '--sections', 'optics'], keys);
    await cliJson(['restore', backup], keys);
    const listed = await cliJson<Scoped[]>(['list'], keys);
    expect(listed[0]).toMatchObject({ id: created.id, sections: ['lasers'], locales: null });
    expect(readRows(keys, 'SELECT version, sections FROM key_scope_changes')).toEqual([{ version: 1, sections: 'lasers' }]);
  });
});
