import type Database from 'better-sqlite3';
// Imported, unlike the rest of drizzle (drizzle.ts): one file, which the search threads load
// without the query builder (its whole exports map parsed once costs about 2 ms).
import { readMigrationFiles, type MigrationMeta } from 'drizzle-orm/migrator';
import { join } from 'node:path';
import { projectRoot } from '../../lib/paths.js';

const MIGRATIONS_TABLE = '__drizzle_migrations';

/** A folder of drizzle-kit migrations: the snapshot's, or the keys database's. */
export type MigrationFolder = 'src/db/snapshot/migrations' | 'src/db/keys/migrations';

const SNAPSHOT: MigrationFolder = 'src/db/snapshot/migrations';
const cached = new Map<MigrationFolder, MigrationMeta[]>();

/** The committed migrations of a folder (drizzle-kit's journal and SQL files), read once per process. */
export function migrations(folder: MigrationFolder = SNAPSHOT): MigrationMeta[] {
  let list = cached.get(folder);
  if (!list) {
    list = readMigrationFiles({ migrationsFolder: join(projectRoot(), folder) });
    cached.set(folder, list);
  }
  return list;
}

/** The schema version this code expects: the timestamp of the newest committed migration. */
export function expectedSchemaVersion(folder: MigrationFolder = SNAPSHOT): number {
  return Math.max(...migrations(folder).map((m) => m.folderMillis));
}

/** The newest migration applied to a database, or 0 when it has none. Works read-only. */
export function appliedSchemaVersion(sqlite: Database.Database): number {
  const table = sqlite
    .prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`)
    .get(MIGRATIONS_TABLE);
  if (!table) return 0;
  const row = sqlite.prepare(`SELECT max(created_at) AS v FROM ${MIGRATIONS_TABLE}`).get() as {
    v: number | null;
  };
  return Number(row.v ?? 0);
}

/**
 * Applies pending migrations, in the same bookkeeping table drizzle-kit uses, inside one
 * BEGIN IMMEDIATE transaction. Drizzle's own migrator reads the applied version before taking
 * the write lock, so a worker and the CLI starting together could both apply the same
 * migration; here the read happens under the lock, which makes concurrent starts idempotent.
 */
export function migrate(sqlite: Database.Database, folder: MigrationFolder = SNAPSHOT): number {
  const pending = () => migrations(folder).filter((m) => m.folderMillis > appliedSchemaVersion(sqlite));
  if (pending().length === 0) return 0;
  let applied = 0;
  sqlite.exec('BEGIN IMMEDIATE');
  try {
    sqlite.exec(
      `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (id INTEGER PRIMARY KEY, hash TEXT NOT NULL, created_at NUMERIC)`,
    );
    const record = sqlite.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (hash, created_at) VALUES (?, ?)`);
    for (const migration of pending()) {
      for (const statement of migration.sql) {
        if (statement.trim()) sqlite.exec(statement);
      }
      record.run(migration.hash, migration.folderMillis);
      applied += 1;
    }
    sqlite.exec('COMMIT');
  } catch (error) {
    sqlite.exec('ROLLBACK');
    throw error;
  }
  return applied;
}
