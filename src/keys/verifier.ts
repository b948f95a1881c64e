import { keyHashes } from '../db/keys.js';
import type { StoreSession } from '../db/snapshot-store.js';
import { ApiKeyError } from '../errors.js';
import { hashKey, isWellFormedKey, sameHash } from './format.js';

interface KnownKey {
  id: number;
  hash: string;
  revoked: boolean;
}

/** A key that passed the check: who it is, and what the API needs to serve it. */
export interface VerifiedKey {
  id: number;
  /** The key's own request rate, when an editor set one; null means the configured default. */
  rateLimitPerMinute: number | null;
}

/**
 * Checks partner keys against the api_keys table. The table is read again whenever the store's
 * generation changes (any commit by the CLI or the worker), so a revocation is refused on the
 * very next request while an unchanged database costs one map lookup per request.
 */
export class KeyVerifier {
  private generation = -1;
  private byHash = new Map<string, KnownKey>();

  /** Returns the key, or throws the 401 that fits. */
  verify(header: string | undefined, session: StoreSession): VerifiedKey {
    if (header === undefined || header.trim() === '') {
      throw new ApiKeyError('missing_api_key', 'Send your API key in the X-API-Key header.');
    }
    const key = header.trim();
    if (!isWellFormedKey(key)) {
      throw new ApiKeyError('invalid_api_key', 'The API key is not valid; check that it was copied whole.');
    }
    this.refresh(session);
    const hash = hashKey(key);
    const known = this.byHash.get(hash);
    // The map is keyed by the hash, not the key, so its lookup time reveals nothing about
    // stored keys; the final comparison is constant-time all the same.
    if (!known || !sameHash(known.hash, hash)) {
      throw new ApiKeyError('invalid_api_key', 'The API key is not valid; check that it was copied whole.');
    }
    if (known.revoked) {
      throw new ApiKeyError('revoked_api_key', 'This API key has been revoked; ask the editors for a new one.');
    }
    return { id: known.id, rateLimitPerMinute: null };
  }

  private refresh(session: StoreSession): void {
    if (session.generation === this.generation) return;
    const next = new Map<string, KnownKey>();
    for (const row of keyHashes(session.db)) {
      next.set(row.hash, { id: row.id, hash: row.hash, revoked: row.revokedAt !== null });
    }
    this.byHash = next;
    this.generation = session.generation;
  }
}
