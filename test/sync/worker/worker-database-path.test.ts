import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrations } from '../../../src/db/sqlite/migrate.js';
import { expectOneLineFailure } from '../../support/keys-helpers.js';
import { runCli, type RunResult } from '../../support/run-node.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { tempDir } from '../../support/snapshot-fixture.js';
import { startTestCms, type TestCms } from '../../fakes/test-cms.js';
import { killWorkers, query, runWorker, syncRuns, workerEnv } from '../../support/worker.js';

/*
 * DATABASE_PATH pointing somewhere wrong (the keys database, another database, a file that is
 * not SQLite, a folder, a path that cannot exist, a mistyped path): the real worker refuses in
 * one line with exit code 1 before writing anything, and calls no CMS.
 */

let dir: ReturnType<typeof tempDir>;
let cms: TestCms;

beforeEach(async () => {
  dir = tempDir('worker-path-');
  cms = await startTestCms();
  cms.store.upsertSection('en', rawSection({ slug: 'news' }));
  cms.store.upsertArticles([rawArticle({ slug: 'story-1', section_slug: 'news' })]);
});

afterEach(async () => {
  await killWorkers();
  await cms.close();
  dir.cleanup();
});

const env = (databasePath: string) => workerEnv({ DATABASE_PATH: databasePath, CMS_BASE_URL: cms.url, LOG_LEVEL: 'warn' });
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** The refusal contract: one line on stderr, exit 1, no stack, nothing asked of the CMS. */
function expectRefused(result: { code: number | null; stdout: string; stderr: string }, message: RegExp): void {
  const line = expectOneLineFailure({ ...result, timedOut: false, endedAt: 0 } satisfies RunResult);
  expect(line).toMatch(message);
  expect(cms.requests).toEqual([]);
}

describe('a file that is not a snapshot', () => {
  it('refuses the keys database in one line and leaves it byte-for-byte as it was, still usable by the keys CLI', async () => {
    const keysPath = dir.path('keys.db');
    const created = await runCli(['create', '--partner', 'Acme Media', '--create'], keysPath);
    expect(created.code, created.stderr).toBe(0);
    const before = sha256(keysPath);
    const files = readdirSync(dir.dir).sort();

    for (const args of [['--once'], ['--once', '--full'], ['--status'], ['--reindex']]) {
      const result = await runWorker(args, env(keysPath));
      expectRefused(result, /^DATABASE_PATH .*keys\.db is not a snapshot this version knows \(the keys database\?\)/);
    }

    expect(sha256(keysPath)).toBe(before);
    expect(readdirSync(dir.dir).sort()).toEqual(files);
    const listed = await runCli(['list'], keysPath);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('Acme Media');
  });

  it("refuses another application's SQLite database and leaves it unchanged", async () => {
    const path = dir.path('other.db');
    const other = new Database(path);
    other.exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('keep me')`);
    other.close();
    const before = sha256(path);

    const result = await runWorker(['--once'], env(path));

    expectRefused(result, /^DATABASE_PATH .*other\.db is not a snapshot this version knows/);
    expect(sha256(path)).toBe(before);
  });

  it('refuses to sync or reindex a snapshot of a newer version (a rollback) in one line and leaves it unchanged; --status still reads it', async () => {
    const path = dir.path('snapshot.db');
    expect((await runWorker(['--once'], env(path))).code).toBe(0);
    const newer = new Database(path);
    newer.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run('f'.repeat(64), Date.now() + 1e9);
    newer.close();
    const before = sha256(path);
    const requestsBefore = cms.requests.length;

    for (const args of [['--once'], ['--once', '--full'], ['--reindex'], []]) {
      const line = expectOneLineFailure({ ...(await runWorker(args, env(path))), timedOut: false, endedAt: 0 });
      expect(line).toMatch(/^DATABASE_PATH .*snapshot\.db was written by a newer version \(schema migrations this worker does not know\) and was left unchanged: .*run the newer worker/);
    }
    expect(cms.requests).toHaveLength(requestsBefore);
    expect(sha256(path)).toBe(before);

    const status = await runWorker(['--status'], env(path));
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/full\s+succeeded/);
  }, 120_000); // six worker processes, one after another

  it('refuses a file that is not SQLite at all in one line and leaves it unchanged', async () => {
    const path = dir.path('notes.txt');
    writeFileSync(path, 'not a database\n'.repeat(200));
    const before = sha256(path);

    const result = await runWorker(['--once'], env(path));

    expectRefused(result, /^DATABASE_PATH .*notes\.txt is not a SQLite database; it was left unchanged/);
    expect(sha256(path)).toBe(before);
  });
});

describe('a path that cannot be a database file', () => {
  it('refuses a folder in one line', async () => {
    const folder = dir.path('a-folder');
    mkdirSync(folder);

    const result = await runWorker(['--once'], env(folder));

    expectRefused(result, /^DATABASE_PATH .*a-folder could not be opened: check that it names a file \(not a folder\)/);
    expect(readdirSync(folder)).toEqual([]);
  });

  it('refuses a path under a file in one line, creating nothing', async () => {
    const file = dir.path('plain-file');
    writeFileSync(file, 'x');

    const result = await runWorker(['--once'], env(`${file}/data/snapshot.db`));

    expectRefused(result, /^DATABASE_PATH .*plain-file\/data\/snapshot\.db: cannot create its folder .*plain-file\/data \(ENOTDIR\)/);
    expect(readFileSync(file, 'utf8')).toBe('x');
  });

  // Skipped only without /proc (not Linux): a folder under /proc cannot be created even by root,
  // which runs these tests here. Every Linux machine, CI's included, has it.
  it.skipIf(!existsSync('/proc/self'))('refuses a folder that cannot be created (under /proc) in one line', async () => {
    const result = await runWorker(['--once'], env('/proc/no-such-folder/snapshot.db'));

    expectRefused(result, /^DATABASE_PATH \/proc\/no-such-folder\/snapshot\.db: cannot create its folder \/proc\/no-such-folder \(ENOENT\)/);
  });
});

describe('a missing snapshot', () => {
  it.each([[['--status']], [['--status', '--json']], [['status']], [['--reindex']]])(
    '%j refuses it in one line and creates neither the file nor its folder',
    async (args) => {
      const path = dir.path('mistyped/snapshot.db');

      const result = await runWorker(args, env(path));

      expectRefused(result, /^no snapshot at DATABASE_PATH .*mistyped\/snapshot\.db: run a sync first \("npm run sync -- --once"\), or check DATABASE_PATH$/);
      expect(existsSync(dir.path('mistyped'))).toBe(false);
    },
  );

  it('is created, with its folder, by the first sync; --status and --reindex then work on it', async () => {
    const path = dir.path('new/folder/snapshot.db');

    const synced = await runWorker(['--once'], env(path));

    expect(synced).toMatchObject({ code: 0, stderr: '' });
    expect(query(path, 'SELECT count(*) AS n FROM articles')).toEqual([{ n: 1 }]);
    expect(await runWorker(['--status'], env(path))).toMatchObject({ code: 0, stderr: '' });
    expect(await runWorker(['--reindex'], env(path))).toMatchObject({ code: 0, stderr: '' });
    expect(syncRuns(path).map((r) => [r.kind, r.status])).toEqual([
      ['full', 'succeeded'],
      ['reindex', 'succeeded'],
    ]);
  });

  it('an empty existing file is taken as a new snapshot by the first sync', async () => {
    const path = dir.path('empty.db');
    writeFileSync(path, '');

    const synced = await runWorker(['--once'], env(path));

    expect(synced).toMatchObject({ code: 0, stderr: '' });
    expect(query(path, 'SELECT count(*) AS n FROM articles')).toEqual([{ n: 1 }]);
  });
});

describe('a snapshot of an older schema version', () => {
  it('is migrated and synced, as before', async () => {
    const path = dir.path('old.db');
    const all = migrations();
    const old = new Database(path);
    old.exec('CREATE TABLE __drizzle_migrations (id INTEGER PRIMARY KEY, hash TEXT NOT NULL, created_at NUMERIC)');
    for (const migration of all.slice(0, -1)) {
      for (const statement of migration.sql) if (statement.trim()) old.exec(statement);
      old.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run(migration.hash, migration.folderMillis);
    }
    old.close();

    const synced = await runWorker(['--once'], env(path));

    expect(synced).toMatchObject({ code: 0, stderr: '' });
    expect(query(path, 'SELECT hash FROM __drizzle_migrations ORDER BY id').map((r) => r.hash)).toEqual(all.map((m) => m.hash));
    expect(query(path, 'SELECT count(*) AS n FROM articles')).toEqual([{ n: 1 }]);
  });
});
