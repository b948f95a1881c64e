import { MeilisearchApiError, type Meilisearch } from 'meilisearch';

/**
 * What the worker finds in place of a live index. `addDocuments` on a missing index creates it
 * with default settings (nothing filterable, nothing sortable): after Meilisearch lost its data,
 * or when Meilisearch joins a deployment that has already synced. Every search then fails, so
 * such an index is rebuilt from the snapshot instead of being updated.
 */
export type LiveIndexState = 'ok' | 'missing' | 'unconfigured';

const isNotFound = (error: unknown) =>
  error instanceof MeilisearchApiError && (error.cause as { code?: string } | undefined)?.code === 'index_not_found';

/** `filterableAttributes` entries are names or, since 1.14, `{ attributePatterns: [...] }`. */
function attributeNames(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((entry: unknown) => {
    if (typeof entry === 'string') return [entry];
    const patterns = (entry as { attributePatterns?: unknown } | null)?.attributePatterns;
    return Array.isArray(patterns) ? patterns.filter((p): p is string => typeof p === 'string') : [];
  });
}

const sameSet = (a: string[], b: string[]) => a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');
const sameList = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * Whether `wanted` is contained in `actual`: objects key by key (the server fills in defaults
 * for keys not asked for), arrays as sets of their items, values as they are.
 */
function contains(actual: unknown, wanted: unknown): boolean {
  if (Array.isArray(wanted)) {
    if (!Array.isArray(actual) || actual.length !== wanted.length) return false;
    const items = actual.map((a) => JSON.stringify(a)).sort();
    return wanted.map((w) => JSON.stringify(w)).sort().every((w, i) => w === items[i]);
  }
  if (wanted !== null && typeof wanted === 'object') {
    if (actual === null || typeof actual !== 'object') return false;
    return Object.entries(wanted).every(([k, v]) => contains((actual as Record<string, unknown>)[k], v));
  }
  return actual === wanted;
}

// Settings compared as the config gives them (objects by the keys given, arrays as sets).
const CONTAINED = ['typoTolerance', 'localizedAttributes', 'displayedAttributes', 'searchCutoffMs'] as const;

/**
 * Whether the settings the server holds are the ones the search depends on: searchable
 * attributes and ranking rules in order, filterable and sortable attributes as sets,
 * maxTotalHits, typoTolerance, localizedAttributes, displayedAttributes and searchCutoffMs. A
 * mismatch (default settings, or meilisearch.config.json edited since the last rebuild) means
 * the index must be rebuilt.
 */
export function settingsMatch(actual: Record<string, unknown>, wanted: Record<string, unknown>): boolean {
  if (!sameSet(attributeNames(actual['filterableAttributes']), attributeNames(wanted['filterableAttributes']))) return false;
  if (!sameSet(attributeNames(actual['sortableAttributes']), attributeNames(wanted['sortableAttributes']))) return false;
  for (const key of ['searchableAttributes', 'rankingRules'] as const) {
    if (wanted[key] !== undefined && !sameList(actual[key], wanted[key])) return false;
  }
  for (const key of CONTAINED) {
    if (wanted[key] !== undefined && !contains(actual[key], wanted[key])) return false;
  }
  const wantedHits = (wanted['pagination'] as { maxTotalHits?: unknown } | undefined)?.maxTotalHits;
  const actualHits = (actual['pagination'] as { maxTotalHits?: unknown } | undefined)?.maxTotalHits;
  return wantedHits === undefined || wantedHits === actualHits;
}

/** Reads a live index's settings (needs `settings.get`): missing, wrongly configured, or ok. */
export async function liveIndexState(client: Meilisearch, uid: string, wanted: Record<string, unknown>): Promise<LiveIndexState> {
  try {
    const settings = (await client.index(uid).getSettings()) as Record<string, unknown>;
    return settingsMatch(settings, wanted) ? 'ok' : 'unconfigured';
  } catch (error) {
    if (isNotFound(error)) return 'missing';
    throw error;
  }
}
