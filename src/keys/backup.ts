import { backupDatabase, restoreDatabase, type BackupResult } from '../db/backup.js';
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { assertKeysDatabase, KEYS_MIGRATIONS, NotAKeysDatabaseError } from '../db/keys-connection.js';
import { applyRevocations, keyHashesOf, readRevocations } from '../db/keys.js';
import { migrate } from '../db/migrate.js';

export { backupDatabase, type BackupResult };

export interface RestoreResult {
  /** Keys in the restored database. */
  keys: number;
  /** Revocations made after the backup, carried over so no revoked key comes back. */
  revocations_kept: number;
  /** Keys of the database being replaced that the backup does not have (created after it). */
  keys_not_in_backup: number;
}

/**
 * Restores the keys database from a backup made by `keys backup`. A key revoked in the
 * database being replaced stays revoked, even if the backup predates the revocation: a
 * restore must never let a revoked key back in. Keys created after the backup are not in it
 * and are counted, so the editor knows to create them again.
 */
export async function restoreKeys(backupPath: string, livePath: string, busyTimeoutMs: number): Promise<RestoreResult> {
  refuseAnotherDatabase(livePath);
  const current = readRevocations(livePath);
  const result: RestoreResult = { keys: 0, revocations_kept: 0, keys_not_in_backup: 0 };
  await restoreDatabase(backupPath, livePath, busyTimeoutMs, (copy) => {
    assertKeysDatabase(copy, backupPath);
    migrate(copy, KEYS_MIGRATIONS);
    result.revocations_kept = applyRevocations(copy, current.revoked);
    const restored = new Set(keyHashesOf(copy));
    result.keys = restored.size;
    result.keys_not_in_backup = [...current.hashes].filter((h) => !restored.has(h)).length;
  });
  return result;
}

/**
 * A restore replaces whatever is at KEYS_DATABASE_PATH: a missing file (the documented
 * procedure moves a broken one aside) or one that cannot be read (a corrupt one) is what it
 * is for, but a readable database that is not a keys database (the snapshot, by a mistyped
 * path) must never be overwritten.
 */
function refuseAnotherDatabase(livePath: string): void {
  if (!existsSync(livePath)) return;
  let live: Database.Database | undefined;
  try {
    live = new Database(livePath, { readonly: true, fileMustExist: true });
    assertKeysDatabase(live, `the file at KEYS_DATABASE_PATH (${livePath})`);
  } catch (error) {
    if (error instanceof NotAKeysDatabaseError) throw error;
    // Unreadable: restoring over it is the point.
  } finally {
    live?.close();
  }
}
