import Database from 'better-sqlite3';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { ensureFolder, SchemaOutdatedError, useWal } from '../sqlite/connection.js';
import * as keysSchema from './keys-schema.js';
import { appliedSchemaVersion, expectedSchemaVersion, migrate, migrations, type MigrationFolder } from '../sqlite/migrate.js';
import { drizzle } from '../sqlite/drizzle.js';
import { openCheckedReader } from '../sqlite/sqlite-file.js';

export type KeysDb = BetterSQLite3Database<typeof keysSchema> & { $client: Database.Database };

export const KEYS_MIGRATIONS: MigrationFolder = 'src/db/keys/migrations';

/** The keys database does not exist, and the command was not allowed to create it. */
export class KeysDatabaseMissingError extends Error {
  override name = 'KeysDatabaseMissingError';
}

/** The file exists but holds something else (the snapshot, another app's database). */
export class NotAKeysDatabaseError extends SchemaOutdatedError {
  override name = 'NotAKeysDatabaseError';
}

/**
 * Opens the keys database for the CLI. A missing file is created only when `create` is set
 * (`keys init`, `--create`): a mistyped path must not hand a partner a key the API never
 * sees. Durability matters more than speed here (keys cannot be rebuilt, writes are rare):
 * WAL with synchronous=FULL, so a committed key survives a power cut.
 */
export function openKeysWriter(path: string, options: { busyTimeoutMs: number; create?: boolean }): { db: KeysDb; created: boolean } {
  const created = !existsSync(path);
  if (created && !options.create) {
    throw new KeysDatabaseMissingError(`no keys database at ${path}: run "npm run keys -- init" to create it, or check KEYS_DATABASE_PATH`);
  }
  if (created) ensureFolder(dirname(path));
  const sqlite = new Database(path, { fileMustExist: !created });
  try {
    sqlite.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs)}`);
    assertKeysDatabase(sqlite, path);
    useWal(sqlite, options.busyTimeoutMs);
    sqlite.pragma('synchronous = FULL');
    migrate(sqlite, KEYS_MIGRATIONS);
  } catch (error) {
    sqlite.close();
    throw error;
  }
  return { db: drizzle(sqlite, { schema: keysSchema }), created };
}

/**
 * Opens the keys database for the API: read-only, never created, never migrated. A missing
 * file throws (SQLITE_CANTOPEN); an unmigrated one SchemaOutdatedError. Both become a 503.
 */
export function openKeysReader(path: string, options: { busyTimeoutMs: number }): KeysDb {
  const sqlite = openCheckedReader(path, options.busyTimeoutMs, (sqlite) => {
    assertKeysDatabase(sqlite, 'the file at KEYS_DATABASE_PATH');
    const applied = appliedSchemaVersion(sqlite);
    if (applied < expectedSchemaVersion(KEYS_MIGRATIONS)) {
      throw new SchemaOutdatedError(
        applied === 0
          ? 'the keys database has no schema yet; run "npm run keys -- init"'
          : 'the keys database schema is older than this version of the API; run "npm run keys -- init" to migrate it',
      );
    }
  });
  return drizzle(sqlite, { schema: keysSchema });
}

/**
 * Refuses a file that is not a keys database, so that KEYS_DATABASE_PATH pointing at the
 * snapshot (or anything else) fails with a message instead of being migrated into one. A
 * keys database has only keys migrations applied; a new one has no tables at all. `what`
 * names the file and `hint` the likely mistake, so the message points at the setting or
 * argument that is wrong.
 */
export function assertKeysDatabase(
  sqlite: Database.Database,
  what: string,
  hint = 'is KEYS_DATABASE_PATH pointing at the snapshot?',
): void {
  const tables = sqlite.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all() as string[];
  if (tables.length === 0) return;
  const known = new Set(migrations(KEYS_MIGRATIONS).map((m) => m.hash));
  const applied = tables.includes('__drizzle_migrations')
    ? (sqlite.prepare('SELECT hash FROM __drizzle_migrations').pluck().all() as string[])
    : [];
  if (applied.length === 0 || applied.some((hash) => !known.has(hash))) {
    throw new NotAKeysDatabaseError(`${what} is not a keys database this version knows (${hint})`);
  }
}
