import type { KeysDb } from '../db/keys/keys-connection.js';
import { readUsage, type UsageFilter, type UsageRow } from '../db/keys/usage-counts.js';
import { UsageError } from '../errors.js';
import { validPartnerName } from './partner-name.js';

export type { UsageRow };

const DAY = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;

/** A `--from`/`--to` day: `YYYY-MM-DD`, a real calendar day. */
export function parseDay(value: string, option: string): string {
  const m = DAY.exec(value);
  const ms = m ? Date.parse(`${value}T00:00:00Z`) : NaN;
  if (!m || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) {
    throw new UsageError(`${option} must be a UTC day as YYYY-MM-DD, e.g. 2026-11-28, got "${value}"`);
  }
  return value;
}

/**
 * `keys usage`: the stored counts, one row per key and day, filtered by partner or key and by
 * days (inclusive). A partner or key id that names no key is refused, so that a typo does not
 * read as "no usage".
 */
export function usageReport(
  db: KeysDb,
  options: { partner?: string; id?: number; from?: string; to?: string },
): UsageRow[] {
  if (options.partner !== undefined && options.id !== undefined) throw new UsageError('use --partner or --id, not both');
  const filter: UsageFilter = {};
  const sqlite = db.$client;
  if (options.partner !== undefined) {
    filter.partner = validPartnerName(options.partner);
    const known = sqlite.prepare('SELECT 1 FROM api_keys WHERE partner = ? LIMIT 1').get(filter.partner);
    if (!known) throw new UsageError(`no key belongs to a partner named "${filter.partner}" ("npm run keys -- list" shows them)`);
  }
  if (options.id !== undefined) {
    filter.keyId = options.id;
    if (!sqlite.prepare('SELECT 1 FROM api_keys WHERE id = ?').get(options.id)) throw new UsageError(`no key with id ${options.id}`);
  }
  if (options.from !== undefined) filter.from = parseDay(options.from, '--from');
  if (options.to !== undefined) filter.to = parseDay(options.to, '--to');
  if (filter.from !== undefined && filter.to !== undefined && filter.from > filter.to) {
    throw new UsageError(`--from ${filter.from} is after --to ${filter.to}`);
  }
  return readUsage(sqlite, filter);
}
