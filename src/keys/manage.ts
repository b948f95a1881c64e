import type { Revocation } from './revocation-log.js';
import { getKey, insertKey, insertReplacement, listKeyRows, markKeyRevoked, setScope, updateKey, type StoredScope } from '../db/keys/keys.js';
import type { KeysDb } from '../db/keys/keys-connection.js';
import type { KeyRow } from '../db/keys/keys-schema.js';
import { UsageError } from '../errors.js';
import { formatUtcSeconds, type Clock } from '../lib/time.js';
import { displayPrefix, generateKey, hashKey } from './format.js';
import { validPartnerName } from './partner-name.js';
import { joinScope, splitScope } from './scope.js';

export { validPartnerName } from './partner-name.js';

export interface CreatedKey {
  id: number;
  partner: string;
  key: string;
  created_at: string;
  expires_at: string | null;
  rate_limit_per_minute: number | null;
  /**
   * The key's locales and sections (null = all); only on a key created with a scope, so that
   * what the CLI prints for other keys is what it printed before scopes.
   */
  locales?: string[] | null;
  sections?: string[] | null;
}

export type KeyStatus = 'active' | 'revoked' | 'expired';

export interface KeySummary {
  id: number;
  partner: string;
  prefix: string;
  status: KeyStatus;
  created_at: string;
  revoked_at: string | null;
  expires_at: string | null;
  last_used_at: string | null;
  /** null: the API's configured default rate. */
  rate_limit_per_minute: number | null;
  /** The key created by `rotate` to replace this one. */
  replaced_by: number | null;
  /** The key's locales and sections (null = all); only on a key that has or had a scope (see CreatedKey). */
  locales?: string[] | null;
  sections?: string[] | null;
}

export interface KeyOptions {
  /** The key stops working this long after its creation; undefined = never. */
  expiresInMs?: number;
  /** The key's own request rate; null or undefined = the configured default. */
  rateLimitPerMinute?: number | null;
  /** Only these locales / sections; undefined = all. */
  locales?: readonly string[];
  sections?: readonly string[];
}

/** A scope change: each side either a new list, `null` for all, or undefined to keep it. */
export interface ScopeChange {
  locales?: readonly string[] | null;
  sections?: readonly string[] | null;
}

export const MAX_RATE_PER_MINUTE = 1_000_000;

/** A per-minute rate from the CLI: a whole number from 1, or `default`. */
export function parseRate(value: string): number | null {
  if (value === 'default') return null;
  if (!/^[0-9]{1,7}$/.test(value) || Number(value) < 1 || Number(value) > MAX_RATE_PER_MINUTE) {
    throw new UsageError(`the rate must be a whole number of requests per minute from 1 to ${MAX_RATE_PER_MINUTE}, or "default", got "${value}"`);
  }
  return Number(value);
}

/** Creates a key for a partner. The returned key is the only copy: only its hash is stored. */
export function createKey(db: KeysDb, partnerName: string, clock: Clock, options: KeyOptions = {}): CreatedKey {
  const partner = validPartnerName(partnerName);
  const now = clock();
  const key = generateKey();
  const row = insertKey(db, {
    partner,
    prefix: displayPrefix(key),
    hash: hashKey(key),
    createdAt: formatUtcSeconds(now),
    expiresAt: options.expiresInMs === undefined ? null : formatUtcSeconds(now + options.expiresInMs),
    rateLimitPerMinute: options.rateLimitPerMinute ?? null,
  }, options.locales || options.sections ? { locales: joinScope(options.locales ?? null), sections: joinScope(options.sections ?? null) } : undefined);
  return created(row, key);
}

/**
 * Changes a key's scope (the sides not given are kept). Applies from the API's next request;
 * the change feed then sends the partner what entered and what left the scope.
 */
export function setKeyScope(db: KeysDb, id: number, change: ScopeChange, clock: Clock): KeySummary {
  const row = mustGet(db, id);
  const scope: StoredScope = {
    locales: change.locales === undefined ? row.scopeLocales : joinScope(change.locales),
    sections: change.sections === undefined ? row.scopeSections : joinScope(change.sections),
  };
  const now = formatUtcSeconds(clock());
  const updated = setScope(db, id, scope, now);
  if (!updated) throw new UsageError(`no key with id ${id}`);
  return summary(updated, now);
}

export function listKeys(db: KeysDb, clock: Clock): KeySummary[] {
  const now = formatUtcSeconds(clock());
  return listKeyRows(db).map((row) => summary(row, now));
}

/**
 * Revokes a key. Revoking an already revoked key is not an error (the editor's intent holds);
 * `alreadyRevoked` tells the CLI to say so.
 */
export function revokeKey(
  db: KeysDb,
  id: number,
  clock: Clock,
): { key: KeySummary; alreadyRevoked: boolean; revocation: Revocation } {
  const before = mustGet(db, id);
  const after = markKeyRevoked(db, id, formatUtcSeconds(clock()));
  if (!after) throw new UsageError(`no key with id ${id}`);
  return {
    key: summary(after, formatUtcSeconds(clock())),
    alreadyRevoked: before.revokedAt !== null,
    // For the revocation log (src/keys/revocation-log.ts): the hash, never the key.
    revocation: { id: after.id, prefix: after.prefix, hash: after.hash, revoked_at: after.revokedAt! },
  };
}

/**
 * Replaces a key with a new one for the same partner, with the same rate. The old key keeps
 * working for `overlapMs` (never longer than it would have anyway), then answers
 * expired_api_key, so the partner can deploy the new key without an outage. The new key
 * expires after `expiresInMs` when given, else after the same lifetime as the old key had,
 * else never.
 */
export function rotateKey(
  db: KeysDb,
  id: number,
  clock: Clock,
  options: { overlapMs: number; expiresInMs?: number },
): { old: KeySummary; created: CreatedKey } {
  const old = mustGet(db, id);
  const now = clock();
  if (old.revokedAt) throw new UsageError(`key ${id} is revoked: create a new key for ${old.partner} instead`);
  if (old.replacedBy !== null) throw new UsageError(`key ${id} was already rotated to key ${old.replacedBy}: rotate that one instead`);
  const oldExpiry = old.expiresAt ? Date.parse(old.expiresAt) : Infinity;
  if (oldExpiry <= now) throw new UsageError(`key ${id} has expired: create a new key for ${old.partner} instead`);
  const lifetime = options.expiresInMs ?? (old.expiresAt ? Date.parse(old.expiresAt) - Date.parse(old.createdAt) : undefined);
  const key = generateKey();
  const result = insertReplacement(
    db,
    id,
    {
      partner: old.partner,
      prefix: displayPrefix(key),
      hash: hashKey(key),
      createdAt: formatUtcSeconds(now),
      expiresAt: lifetime === undefined ? null : formatUtcSeconds(now + lifetime),
      rateLimitPerMinute: old.rateLimitPerMinute,
    },
    formatUtcSeconds(Math.min(oldExpiry, now + options.overlapMs)),
    // The new key sees what the old one saw: the partner's licence does not change with its key.
    old.scopeVersion > 0 ? { locales: old.scopeLocales, sections: old.scopeSections } : undefined,
  );
  return { old: summary(result.old, formatUtcSeconds(now)), created: created(result.created, key) };
}

/** Sets a key's own request rate, or back to the default with null. */
export function setKeyRate(db: KeysDb, id: number, rate: number | null, clock: Clock): KeySummary {
  mustGet(db, id);
  const row = updateKey(db, id, { rateLimitPerMinute: rate });
  if (!row) throw new UsageError(`no key with id ${id}`);
  return summary(row, formatUtcSeconds(clock()));
}

function mustGet(db: KeysDb, id: number): KeyRow {
  const row = getKey(db, id);
  if (!row) throw new UsageError(`no key with id ${id}`);
  return row;
}

/** `locales` and `sections` of a key that has (or had) a scope; nothing for a key that never had one. */
function scopeFields(row: KeyRow): Pick<KeySummary, 'locales' | 'sections'> {
  return row.scopeVersion === 0 ? {} : { locales: splitScope(row.scopeLocales), sections: splitScope(row.scopeSections) };
}

function created(row: KeyRow, key: string): CreatedKey {
  return {
    id: row.id,
    partner: row.partner,
    key,
    created_at: row.createdAt,
    expires_at: row.expiresAt,
    rate_limit_per_minute: row.rateLimitPerMinute,
    ...scopeFields(row),
  };
}

function summary(row: KeyRow, now: string): KeySummary {
  const status: KeyStatus = row.revokedAt ? 'revoked' : row.expiresAt && row.expiresAt <= now ? 'expired' : 'active';
  return {
    id: row.id,
    partner: row.partner,
    prefix: row.prefix,
    status,
    created_at: row.createdAt,
    revoked_at: row.revokedAt,
    expires_at: row.expiresAt,
    last_used_at: row.lastUsedAt,
    rate_limit_per_minute: row.rateLimitPerMinute,
    replaced_by: row.replacedBy,
    ...scopeFields(row),
  };
}
