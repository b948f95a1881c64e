import { asc, eq } from 'drizzle-orm';
import { writeTransaction, type Db } from './connection.js';
import { apiKeys, type ApiKeyRow } from './schema.js';

export function insertKey(db: Db, row: Omit<ApiKeyRow, 'id' | 'revokedAt'>): ApiKeyRow {
  return writeTransaction(db, () => db.insert(apiKeys).values(row).returning().get());
}

export function listKeys(db: Db): ApiKeyRow[] {
  return db.select().from(apiKeys).orderBy(asc(apiKeys.id)).all();
}

export function getKey(db: Db, id: number): ApiKeyRow | undefined {
  return db.select().from(apiKeys).where(eq(apiKeys.id, id)).get();
}

/** Sets revoked_at once; a key already revoked keeps its first revocation time. */
export function markKeyRevoked(db: Db, id: number, at: string): ApiKeyRow | undefined {
  return writeTransaction(db, () => {
    const row = getKey(db, id);
    if (!row || row.revokedAt) return row;
    return db.update(apiKeys).set({ revokedAt: at }).where(eq(apiKeys.id, id)).returning().get();
  });
}

/** Every key's hash and revocation state: what the API needs to check a request. */
export function keyHashes(db: Db): Pick<ApiKeyRow, 'id' | 'hash' | 'revokedAt'>[] {
  return db
    .select({ id: apiKeys.id, hash: apiKeys.hash, revokedAt: apiKeys.revokedAt })
    .from(apiKeys)
    .all();
}
