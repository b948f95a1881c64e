import { backupDatabase, restoreDatabase, type BackupResult } from '../db/sqlite/backup.js';
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { assertKeysDatabase, KEYS_MIGRATIONS, NotAKeysDatabaseError } from '../db/keys/keys-connection.js';
import { applyRevocations, keyHashesOf, readKeysOf, type LiveKey } from '../db/keys/keys.js';
import { migrate } from '../db/sqlite/migrate.js';
import { mergeUsage, readStoredUsage, USAGE_TABLES, type StoredUsage } from '../db/keys/usage-counts.js';
import { readRevocationLog, revocationLogPath } from './revocation-log.js';

export { backupDatabase, type BackupResult };

/** Which key a restore is talking about: never the key, never its hash. */
export interface KeyMention {
  id: number;
  partner: string;
  prefix: string;
}

export interface RestoreResult {
  /** Keys in the restored database. */
  keys: number;
  /** Revocations made after the backup, carried over so no revoked key comes back. */
  revocations_kept: number;
  /** Keys of the database being replaced that the backup does not have (created after it). */
  keys_not_in_backup: number;
  /** The keys behind `revocations_kept`, as they are in the restored database. */
  revoked_after_backup: (KeyMention & { revoked_at: string })[];
  /**
   * The keys behind `keys_not_in_backup`, as they were in the database replaced: they no
   * longer work, and this is the only record of whose they were.
   */
  not_in_backup: (KeyMention & { created_at: string })[];
  /** Whether the database being replaced could be read (its revocations and keys known). */
  live_database: 'read' | 'missing' | 'unreadable';
  /** Key-days of usage carried over from the database replaced (the larger count of each kept). */
  usage_days_carried: number;
  /** Revocations read back from the revocation log (src/keys/revocation-log.ts). */
  revocations_logged: number;
  /**
   * Set when revocations made after the backup may be unknown (the live database could not be
   * read): which ones this restore cannot know about, and what to do. Printed first, loudly.
   */
  warning: string | null;
}

/**
 * Restores the keys database from a backup made by `keys backup`. A key revoked in the
 * database being replaced stays revoked, even if the backup predates the revocation: a
 * restore must never let a revoked key back in. Keys created after the backup are not in it;
 * they are read from the live database before it is replaced and named in the result, so the
 * editor knows for whom to create keys again.
 */
export async function restoreKeys(backupPath: string, livePath: string, busyTimeoutMs: number): Promise<RestoreResult> {
  refuseAnotherDatabase(livePath);
  const live = readKeysOf(livePath);
  const current = live.keys;
  const logged = readRevocationLog(livePath);
  // Counted since the backup: carried over, as revocations are (usage written by a running
  // API between this read and the restore, a few seconds at most, is not).
  const usage = live.state === 'read' ? usageOf(livePath) : { counts: [], articles: [] };
  let result: RestoreResult | undefined;
  await restoreDatabase(backupPath, livePath, busyTimeoutMs, (copy) => {
    // The mistake is then in the argument, not in KEYS_DATABASE_PATH (checked above).
    assertKeysDatabase(
      copy,
      `the backup file ${backupPath}`,
      'a snapshot backup? restore takes a file written by "keys backup" without --snapshot',
    );
    migrate(copy, KEYS_MIGRATIONS);
    const fromLog = (logged ?? []).map((r) => ({ hash: r.hash, revokedAt: r.revoked_at }));
    const kept = applyRevocations(copy, [...current, ...fromLog]);
    const carried = mergeUsage(copy, usage);
    const restored = new Set(keyHashesOf(copy));
    const lost = current.filter((k) => !restored.has(k.hash));
    result = {
      live_database: live.state,
      revocations_logged: logged?.length ?? 0,
      usage_days_carried: carried,
      warning: unknownRevocations(livePath, live.state, logged !== undefined),
      keys: restored.size,
      revocations_kept: kept.length,
      keys_not_in_backup: lost.length,
      revoked_after_backup: kept.map((k) => ({ ...mention(k), revoked_at: k.revokedAt! })),
      not_in_backup: lost.map((k) => ({ ...mention(k), created_at: k.createdAt })),
    };
  }, USAGE_TABLES);
  return result!;
}

/**
 * What a restore cannot know when the live database could not be read: revocations made after
 * the backup come only from the revocation log then, and keys created after it are not known
 * at all. Undefined (null) when the live database was read.
 */
function unknownRevocations(livePath: string, state: 'read' | 'missing' | 'unreadable', hasLog: boolean): string | null {
  if (state === 'read') return null;
  const what = state === 'missing' ? 'was missing' : 'could not be read';
  const log = revocationLogPath(livePath);
  return hasLog
    ? `the keys database being replaced ${what}: revocations made after the backup were read from the revocation log ${log}; ` +
        `a key revoked after the backup by any other means (SQL, an older version without the log) is active again, and keys created after the backup are unknown: check "npm run keys -- list" and revoke again any key that must not work`
    : `the keys database being replaced ${what} and there is no revocation log (${log}): every key revoked after the backup is active again, ` +
        `and keys created after it are unknown: check "npm run keys -- list" now and revoke again any key that must not work`;
}

function usageOf(path: string): StoredUsage {
  let sqlite: Database.Database | undefined;
  try {
    sqlite = new Database(path, { readonly: true, fileMustExist: true });
    return readStoredUsage(sqlite);
  } catch {
    return { counts: [], articles: [] };
  } finally {
    sqlite?.close();
  }
}

const mention = (k: LiveKey): KeyMention => ({ id: k.id, partner: k.partner, prefix: k.prefix });

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
