import type { Db } from '../../db/sqlite/connection.js';
import { getWorkerState, setWorkerState } from '../../db/snapshot/sync-runs.js';
import type { Locale } from '../../locale.js';

/*
 * Article ids whose entry in the live Meilisearch index may not match the snapshot: written by
 * the worker into the snapshot before it pushes a sync's changes, cleared once Meilisearch has
 * applied them (or a rebuild has replaced the index). While an update is on its way, or after
 * it failed and until the next run rebuilds, the API leaves these ids out of the search itself
 * (`id NOT IN [...]`), so one partner search stays one engine request with full pages and an
 * honest total. Past MAX_UNSYNCED_IDS the list is not kept ("too many"): the API then relies
 * on the snapshot's hydration alone, which drops stale hits (pages may run short until the
 * index catches up).
 */

export const MAX_UNSYNCED_IDS = 5_000;
export type Unsynced = readonly number[] | 'too_many';

const key = (locale: Locale) => `meilisearch_unsynced_${locale}`;
const NONE: readonly number[] = Object.freeze([]);
let lastRaw: string | undefined;
let lastParsed: Unsynced = NONE;

function parse(raw: string | undefined): Unsynced {
  if (raw === undefined) return NONE;
  if (raw === lastRaw) return lastParsed;
  let parsed: Unsynced;
  try {
    const value: unknown = JSON.parse(raw);
    parsed = Array.isArray(value) && value.every((id) => Number.isSafeInteger(id)) ? Object.freeze(value as number[]) : 'too_many';
  } catch {
    parsed = 'too_many';
  }
  lastRaw = raw;
  lastParsed = parsed;
  return parsed;
}

export function readUnsynced(db: Db, locale: Locale): Unsynced {
  return parse(getWorkerState(db, key(locale)));
}

/** Adds ids to a locale's list; returns the list as it was before, to restore once they are applied. */
export function markUnsynced(db: Db, locale: Locale, ids: readonly number[], nowIso: string): Unsynced {
  const before = readUnsynced(db, locale);
  if (ids.length === 0) return before;
  const merged = before === 'too_many' ? 'too_many' : [...new Set([...before, ...ids])];
  const value = merged === 'too_many' || merged.length > MAX_UNSYNCED_IDS ? '"too_many"' : JSON.stringify(merged);
  setWorkerState(db, key(locale), value, nowIso);
  return before;
}

/** Sets a locale's list back (`[]` clears it). */
export function restoreUnsynced(db: Db, locale: Locale, value: Unsynced, nowIso: string): void {
  const raw = value === 'too_many' ? '"too_many"' : value.length === 0 ? undefined : JSON.stringify(value);
  setWorkerState(db, key(locale), raw, nowIso);
}
