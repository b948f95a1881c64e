import { insertKey, listKeys as listKeyRows, markKeyRevoked, getKey } from '../db/keys.js';
import type { Db } from '../db/connection.js';
import type { ApiKeyRow } from '../db/schema.js';
import { UsageError } from '../errors.js';
import { formatUtcSeconds, type Clock } from '../time.js';
import { displayPrefix, generateKey, hashKey } from './format.js';

export interface CreatedKey {
  id: number;
  partner: string;
  key: string;
  created_at: string;
}

export interface KeySummary {
  id: number;
  partner: string;
  prefix: string;
  created_at: string;
  revoked_at: string | null;
}

const MAX_PARTNER_LENGTH = 200;

/** The partner name as stored, or a UsageError saying what is wrong with it. */
export function validPartnerName(name: string): string {
  const partner = name.trim();
  if (partner === '') throw new UsageError('the partner name must not be empty');
  if ([...partner].length > MAX_PARTNER_LENGTH) {
    throw new UsageError(`the partner name must be at most ${MAX_PARTNER_LENGTH} characters`);
  }
  // Control characters would garble the listing and any log that shows the partner.
  if (/\p{Cc}/u.test(partner)) throw new UsageError('the partner name must not contain control characters');
  return partner;
}

/** Creates a key for a partner. The returned key is the only copy: only its hash is stored. */
export function createKey(db: Db, partnerName: string, clock: Clock): CreatedKey {
  const partner = validPartnerName(partnerName);
  const key = generateKey();
  const row = insertKey(db, {
    partner,
    prefix: displayPrefix(key),
    hash: hashKey(key),
    createdAt: formatUtcSeconds(clock()),
  });
  return { id: row.id, partner: row.partner, key, created_at: row.createdAt };
}

export function listKeys(db: Db): KeySummary[] {
  return listKeyRows(db).map(summary);
}

/**
 * Revokes a key. Revoking an already revoked key is not an error (the editor's intent holds);
 * `alreadyRevoked` tells the CLI to say so.
 */
export function revokeKey(db: Db, id: number, clock: Clock): { key: KeySummary; alreadyRevoked: boolean } {
  const before = getKey(db, id);
  if (!before) throw new UsageError(`no key with id ${id}`);
  const after = markKeyRevoked(db, id, formatUtcSeconds(clock()));
  if (!after) throw new UsageError(`no key with id ${id}`);
  return { key: summary(after), alreadyRevoked: before.revokedAt !== null };
}

function summary(row: ApiKeyRow): KeySummary {
  return {
    id: row.id,
    partner: row.partner,
    prefix: row.prefix,
    created_at: row.createdAt,
    revoked_at: row.revokedAt,
  };
}
