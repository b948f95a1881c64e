import type { Meilisearch } from 'meilisearch';

/**
 * The oldest Meilisearch this service speaks to. Everything it sends exists in 1.16: search
 * with `locales` and `page`/`hitsPerPage`, `localizedAttributes`, `id IN`/`NOT IN` filters,
 * task deletion by type. Older servers are refused before anything is written or searched.
 */
export const MIN_MEILI_VERSION = '1.16.0';

/**
 * Where `POST /swap-indexes` learned `rename` (SwapIndexesPayload, routes/swap_indexes.rs).
 * Before it the payload is read with deny_unknown_fields: `{ indexes, rename }` is a 400
 * `bad_request` ("Unknown field `rename`"), so older servers get `{ indexes }` alone.
 */
export const SWAP_RENAME_SINCE = '1.18.0';

export interface ServerVersion {
  /** `pkgVersion` as the server gave it, e.g. `1.17.1`. */
  text: string;
  /** Swaps may carry `rename: true` (a fresh index renamed into place). */
  swapRename: boolean;
}

/** A server older than MIN_MEILI_VERSION, or one whose version cannot be read. */
export class MeiliVersionError extends Error {
  override name = 'MeiliVersionError';
}

function parts(version: string): [number, number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

/** Whether `version` is `minimum` or later (pre-release suffixes count as the release). */
export function versionAtLeast(version: string, minimum: string): boolean {
  const a = parts(version);
  const b = parts(minimum);
  if (!a || !b) return false;
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! > b[i]!;
  return true;
}

/** What a `pkgVersion` allows, or a one-line refusal for an operator. */
export function serverVersion(pkgVersion: unknown): ServerVersion {
  if (typeof pkgVersion !== 'string' || !parts(pkgVersion)) {
    throw new MeiliVersionError(`Meilisearch answered GET /version without a version this service can read (${JSON.stringify(pkgVersion)})`);
  }
  if (!versionAtLeast(pkgVersion, MIN_MEILI_VERSION)) {
    throw new MeiliVersionError(
      `Meilisearch ${pkgVersion} is older than ${MIN_MEILI_VERSION}, the oldest version this service supports: upgrade Meilisearch (nothing was sent to it)`,
    );
  }
  return { text: pkgVersion, swapRename: versionAtLeast(pkgVersion, SWAP_RENAME_SINCE) };
}

/** `GET /version` (the key needs the `version` action), checked against MIN_MEILI_VERSION. */
export async function fetchServerVersion(client: Meilisearch): Promise<ServerVersion> {
  const { pkgVersion } = await client.getVersion();
  return serverVersion(pkgVersion);
}
