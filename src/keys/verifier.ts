import { keyRecords, scopeHistory } from '../db/keys/keys.js';
import type { KeysSession } from '../db/keys/keys-store.js';
import { ApiKeyError, type ApiKeyErrorCode } from '../errors.js';
import { systemClock, type Clock } from '../lib/time.js';
import { hashKey, isWellFormedKey, KEY_PREFIX } from './format.js';
import { makeScope, splitScope, type KeyScope } from './scope.js';

interface KnownKey {
  id: number;
  revoked: boolean;
  /** Epoch ms from which the key is expired; Infinity when it never expires. */
  expiresAt: number;
  rateLimitPerMinute: number | null;
  /** What verify() returns for it: made once per read of the table, not per request. */
  verified: VerifiedKey;
}

/** A key that passed the check: who it is, and what the API needs to serve it. */
export interface VerifiedKey {
  id: number;
  /** The key's own request rate, when an editor set one; null means the configured default. */
  rateLimitPerMinute: number | null;
  /**
   * What the key may see; null for a key that never had a scope (it sees everything, as
   * before scopes). Read with the keys, so a scope change applies from the next request.
   */
  scope?: KeyScope | null;
}

const INVALID = 'The API key is not valid; check that it was copied whole.';

/**
 * Checks partner keys against the keys database. The table is read again whenever the
 * session's generation changes (any commit by the CLI, or the API's own last-used and usage
 * writes, at most once every 2 seconds while requests come: a read of every key's row), so a revocation is refused on the very next request while an
 * unchanged database costs one map lookup per request. Expiry is checked against the clock
 * on every request, so an expired key is refused at its time without any write.
 */
export class KeyVerifier {
  private generation = -1;
  private byHash = new Map<string, KnownKey>();
  private readonly refused: Record<ApiKeyErrorCode, number> = {
    missing_api_key: 0,
    invalid_api_key: 0,
    revoked_api_key: 0,
    expired_api_key: 0,
  };

  constructor(private readonly clock: Clock = systemClock) {}

  /** Refusals by reason since start, for metrics (plain numbers; the metrics module formats them). */
  stats(): { refused: Readonly<Record<ApiKeyErrorCode, number>> } {
    return { refused: { ...this.refused } };
  }

  /** Returns the key, or throws the 401 that fits (or the 503 when the keys cannot be read). */
  verify(header: string | undefined, session: KeysSession): VerifiedKey {
    try {
      return this.check(header, session);
    } catch (error) {
      if (error instanceof ApiKeyError) this.refused[error.code as ApiKeyErrorCode] += 1;
      throw error;
    }
  }

  private check(header: string | undefined, session: KeysSession): VerifiedKey {
    if (header === undefined || header.trim() === '') {
      throw new ApiKeyError('missing_api_key', 'Send your API key in the X-API-Key header.');
    }
    const key = header.trim();
    if (!isWellFormedKey(key)) throw new ApiKeyError('invalid_api_key', INVALID);
    this.refresh(session);
    const hash = hashKey(key);
    const known = this.byHash.get(hash);
    // The map is keyed by the SHA-256 of the key, not the key: how long a lookup takes depends
    // on digests a caller cannot steer towards a stored one, so it reveals nothing about stored
    // keys, and a hit is already an exact match (a second, constant-time comparison of the same
    // two digests would add nothing but its cost on every request).
    if (!known) throw new ApiKeyError('invalid_api_key', INVALID);
    if (known.revoked) {
      throw new ApiKeyError('revoked_api_key', 'This API key has been revoked; ask the editors for a new one.');
    }
    const now = this.clock();
    if (now >= known.expiresAt) {
      throw new ApiKeyError('expired_api_key', 'This API key has expired; ask the editors for a new one.');
    }
    session.used(known.id, now);
    return known.verified;
  }

  /**
   * Reads the keys and hashes one, checking nothing and counting nothing: the API calls it
   * before its port opens, since the first partner's request otherwise paid about 6 ms for
   * the first read of the table (drizzle building its query, the map) and the first hash.
   */
  warm(session: KeysSession): void {
    this.refresh(session);
    hashKey(`${KEY_PREFIX}${'0'.repeat(32)}`);
  }

  private refresh(session: KeysSession): void {
    if (session.generation === this.generation) return;
    const next = new Map<string, KnownKey>();
    // The keys and their scopes' history from one read transaction: a key's scope version is
    // always in the history read with it.
    const { records, changes } = session.read((db) => db.$client.transaction(() => ({ records: keyRecords(db), changes: scopeHistory(db) }))());
    const histories = new Map<number, Map<number, readonly string[] | null>>();
    for (const change of changes) {
      let history = histories.get(change.keyId);
      if (!history) histories.set(change.keyId, (history = new Map()));
      history.set(change.version, splitScope(change.sections));
    }
    for (const row of records) {
      const scope = makeScope(row.scopeLocales, row.scopeSections, row.scopeVersion, histories.get(row.id) ?? new Map());
      next.set(row.hash, {
        id: row.id,
        revoked: row.revokedAt !== null,
        expiresAt: row.expiresAt === null ? Infinity : Date.parse(row.expiresAt),
        rateLimitPerMinute: row.rateLimitPerMinute,
        verified: Object.freeze(scope ? { id: row.id, rateLimitPerMinute: row.rateLimitPerMinute, scope } : { id: row.id, rateLimitPerMinute: row.rateLimitPerMinute }),
      });
    }
    this.byHash = next;
    this.generation = session.generation;
  }
}
