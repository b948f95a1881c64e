import { importSnapshotKeys, type ImportResult } from '../db/keys/keys.js';
import { openKeysWriter, type KeysDb } from '../db/keys/keys-connection.js';

export type { ImportResult };

export interface OpenedKeys {
  db: KeysDb;
  created: boolean;
  /** What came over from the snapshot's old api_keys table; null when no import ran. */
  imported: ImportResult | null;
}

/**
 * Opens the keys database for an editor's command. It is created only when `create` is set
 * (`keys init`, `--create`); a new one first takes over the keys of the snapshot at
 * `snapshotPath` (from before keys had their own database), so an upgrade loses no key.
 * `keys init` runs that import again on an existing database too: it is idempotent.
 */
export function openKeys(
  keysPath: string,
  snapshotPath: string,
  options: { busyTimeoutMs: number; create: boolean; importAlways?: boolean },
): OpenedKeys {
  const { db, created } = openKeysWriter(keysPath, { busyTimeoutMs: options.busyTimeoutMs, create: options.create });
  try {
    const imported = created || options.importAlways ? importSnapshotKeys(db, snapshotPath) : null;
    return { db, created, imported };
  } catch (error) {
    db.$client.close();
    throw error;
  }
}
