import Database from 'better-sqlite3';
import { asc, eq } from '../sqlite/drizzle.js';
import { existsSync } from 'node:fs';
import { writeTransaction } from '../sqlite/connection.js';
import type { KeysDb } from './keys-connection.js';
import { apiKeys, keyScopeChanges, type KeyRow, type KeyScopeChangeRow } from './keys-schema.js';

/*
 * Verbs over the keys database's rows. Writes run in BEGIN IMMEDIATE transactions, so the
 * CLI, a second CLI and the API's last-used writer never interleave.
 */

const inTransaction = <T>(db: KeysDb, fn: () => T): T => writeTransaction(db, fn);

export type NewKeyRow = Pick<KeyRow, 'partner' | 'prefix' | 'hash' | 'createdAt'> &
  Partial<Pick<KeyRow, 'expiresAt' | 'rateLimitPerMinute'>>;

/** A key's scope as stored: comma-separated columns, null = all (src/keys/scope.ts). */
export interface StoredScope {
  locales: string | null;
  sections: string | null;
}

/** Inserts a key; with a scope, as its version 1 (recorded in the scope history). */
export function insertKey(db: KeysDb, row: NewKeyRow, scope?: StoredScope, changedAt?: string): KeyRow {
  return inTransaction(db, () => {
    const created = db
      .insert(apiKeys)
      .values(scope ? { ...row, scopeLocales: scope.locales, scopeSections: scope.sections, scopeVersion: 1 } : row)
      .returning()
      .get();
    if (scope) db.insert(keyScopeChanges).values({ keyId: created.id, version: 1, ...scope, changedAt: changedAt ?? row.createdAt }).run();
    return created;
  });
}

/**
 * Gives a key a new scope: the next version, recorded in the history in the same transaction,
 * so the change feed always knows the scope a cursor was handed out under.
 */
export function setScope(db: KeysDb, id: number, scope: StoredScope, changedAt: string): KeyRow | undefined {
  return inTransaction(db, () => {
    const row = getKey(db, id);
    if (!row) return undefined;
    const version = row.scopeVersion + 1;
    db.insert(keyScopeChanges).values({ keyId: id, version, ...scope, changedAt }).run();
    return db
      .update(apiKeys)
      .set({ scopeLocales: scope.locales, scopeSections: scope.sections, scopeVersion: version })
      .where(eq(apiKeys.id, id))
      .returning()
      .get();
  });
}

/** Every recorded scope of every key (a few rows per key): what the API's key check keeps. */
export function scopeHistory(db: KeysDb): KeyScopeChangeRow[] {
  return db.select().from(keyScopeChanges).all();
}

export function listKeyRows(db: KeysDb): KeyRow[] {
  return db.select().from(apiKeys).orderBy(asc(apiKeys.id)).all();
}

export function getKey(db: KeysDb, id: number): KeyRow | undefined {
  return db.select().from(apiKeys).where(eq(apiKeys.id, id)).get();
}

/** Sets revoked_at once; a key already revoked keeps its first revocation time. */
export function markKeyRevoked(db: KeysDb, id: number, at: string): KeyRow | undefined {
  return inTransaction(db, () => {
    const row = getKey(db, id);
    if (!row || row.revokedAt) return row;
    return db.update(apiKeys).set({ revokedAt: at }).where(eq(apiKeys.id, id)).returning().get();
  });
}

export function updateKey(db: KeysDb, id: number, values: Partial<Pick<KeyRow, 'rateLimitPerMinute' | 'expiresAt'>>): KeyRow | undefined {
  return inTransaction(db, () => db.update(apiKeys).set(values).where(eq(apiKeys.id, id)).returning().get());
}

/**
 * Rotation in one transaction: the new key is inserted and the old one gets its end of
 * overlap and a pointer to its successor, or neither happens.
 */
export function insertReplacement(
  db: KeysDb,
  oldId: number,
  row: NewKeyRow,
  oldExpiresAt: string,
  scope?: StoredScope,
): { old: KeyRow; created: KeyRow } {
  return inTransaction(db, () => {
    const created = insertKey(db, row, scope);
    const old = db
      .update(apiKeys)
      .set({ expiresAt: oldExpiresAt, replacedBy: created.id })
      .where(eq(apiKeys.id, oldId))
      .returning()
      .get();
    return { old: old!, created };
  });
}

/** What the API needs to check a request: never the partner name, never more than this. */
export type KeyRecord = Pick<
  KeyRow,
  'id' | 'hash' | 'revokedAt' | 'expiresAt' | 'rateLimitPerMinute' | 'scopeLocales' | 'scopeSections' | 'scopeVersion'
>;

export function keyRecords(db: KeysDb): KeyRecord[] {
  return db
    .select({
      id: apiKeys.id,
      hash: apiKeys.hash,
      revokedAt: apiKeys.revokedAt,
      expiresAt: apiKeys.expiresAt,
      rateLimitPerMinute: apiKeys.rateLimitPerMinute,
      scopeLocales: apiKeys.scopeLocales,
      scopeSections: apiKeys.scopeSections,
      scopeVersion: apiKeys.scopeVersion,
    })
    .from(apiKeys)
    .all();
}

/**
 * Writes a batch of last-used times in one transaction. A time never moves backwards, so
 * several API processes flushing in any order keep the latest.
 */
export function recordLastUsed(sqlite: Database.Database, uses: ReadonlyMap<number, string>): void {
  const update = sqlite.prepare(
    'UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)',
  );
  sqlite
    .transaction(() => {
      for (const [id, at] of uses) update.run(at, id, at);
    })
    .immediate();
}

export interface ImportResult {
  /**
   * What was at the snapshot path: nothing (a new installation, or a mistyped DATABASE_PATH),
   * a snapshot without the old table, or one whose old table was read.
   */
  snapshot: 'missing' | 'no_keys_table' | 'read';
  /** Keys copied from the snapshot's api_keys table. */
  imported: number;
  /** Keys already in the keys database (same hash): left as they are there, but for revocations. */
  alreadyPresent: number;
  /**
   * Keys already present that the snapshot has revoked and the keys database had not (the old
   * CLI used during the switch): now revoked here too, with the snapshot's time.
   */
  revocationsApplied: number;
}

/**
 * Copies the keys of an existing snapshot (from before keys had their own database) into the
 * keys database: hashes only, as stored. Idempotent: a key whose hash is already present is
 * not copied again, and only ever gains a revocation: one the snapshot has (made with the old
 * CLI after a first `init`) is applied, while a revocation in the keys database is never
 * undone, so running it again, or after restoring an old snapshot, never brings back a
 * revoked key. Ids are kept when free, so `revoke 3` still means the same partner. The
 * snapshot is opened read-only and never changed.
 */
export function importSnapshotKeys(db: KeysDb, snapshotPath: string): ImportResult {
  const result: ImportResult = { snapshot: 'missing', imported: 0, alreadyPresent: 0, revocationsApplied: 0 };
  if (!existsSync(snapshotPath)) return result;
  let legacy: Pick<KeyRow, 'id' | 'partner' | 'prefix' | 'hash' | 'createdAt' | 'revokedAt'>[];
  let snapshot: Database.Database | undefined;
  try {
    snapshot = new Database(snapshotPath, { readonly: true, fileMustExist: true });
    const table = snapshot.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'api_keys'`).get();
    if (!table) return { ...result, snapshot: 'no_keys_table' };
    legacy = snapshot
      .prepare('SELECT id, partner, prefix, hash, created_at AS createdAt, revoked_at AS revokedAt FROM api_keys ORDER BY id')
      .all() as typeof legacy;
  } catch (error) {
    throw new Error(
      `cannot read the old keys of the snapshot at ${snapshotPath} (${(error as Error).message}); fix DATABASE_PATH and run "npm run keys -- init" again`,
    );
  } finally {
    snapshot?.close();
  }
  result.snapshot = 'read';
  inTransaction(db, () => {
    for (const row of legacy) {
      const present = db.select({ id: apiKeys.id, revokedAt: apiKeys.revokedAt }).from(apiKeys).where(eq(apiKeys.hash, row.hash)).get();
      if (present) {
        result.alreadyPresent += 1;
        if (row.revokedAt !== null && present.revokedAt === null) {
          db.update(apiKeys).set({ revokedAt: row.revokedAt }).where(eq(apiKeys.id, present.id)).run();
          result.revocationsApplied += 1;
        }
        continue;
      }
      const idFree = !getKey(db, row.id);
      const { id, ...rest } = row;
      db.insert(apiKeys).values(idFree ? { id, ...rest } : rest).run();
      result.imported += 1;
    }
  });
  return result;
}

/** A key of a keys database file as a restore reports it: what identifies it, and its hash to match. */
export type LiveKey = Pick<KeyRow, 'id' | 'partner' | 'prefix' | 'hash' | 'createdAt' | 'revokedAt'>;

/**
 * Every key of a keys database file, read-only, and whether it could be read: a lost or
 * corrupt database is the usual reason to restore, and then its revocations are not known.
 */
export function readKeysOf(path: string): { keys: LiveKey[]; state: 'read' | 'missing' | 'unreadable' } {
  if (!existsSync(path)) return { keys: [], state: 'missing' };
  let sqlite: Database.Database | undefined;
  try {
    sqlite = new Database(path, { readonly: true, fileMustExist: true });
    const keys = sqlite
      .prepare('SELECT id, partner, prefix, hash, created_at AS createdAt, revoked_at AS revokedAt FROM api_keys ORDER BY id')
      .all() as LiveKey[];
    return { keys, state: 'read' };
  } catch {
    return { keys: [], state: 'unreadable' };
  } finally {
    sqlite?.close();
  }
}

/**
 * Marks keys revoked (keeping an earlier revocation time), matched by hash; returns the keys
 * that changed, as they are in `sqlite`.
 */
export function applyRevocations(sqlite: Database.Database, revocations: readonly Pick<LiveKey, 'hash' | 'revokedAt'>[]): LiveKey[] {
  const update = sqlite.prepare(
    `UPDATE api_keys SET revoked_at = ? WHERE hash = ? AND revoked_at IS NULL
     RETURNING id, partner, prefix, hash, created_at AS createdAt, revoked_at AS revokedAt`,
  );
  const changed = sqlite
    .transaction(() => revocations.flatMap((r) => (r.revokedAt === null ? [] : (update.all(r.revokedAt, r.hash) as LiveKey[]))))
    .immediate();
  return changed.sort((a, b) => a.id - b.id);
}

export function keyHashesOf(sqlite: Database.Database): string[] {
  return sqlite.prepare('SELECT hash FROM api_keys').pluck().all() as string[];
}
