import type { Locale } from '../src/locale.js';
import type { Logger } from '../src/logger.js';
import { formatUtcSeconds, type Clock } from '../src/lib/time.js';
import type { LocaleInput } from './apply.js';
import type { CmsAdapter } from './cms/types.js';
import { anyCandidateListed, changedDuringListing, stageListing } from './listing.js';
import { progressReporter } from './progress.js';
import type { Staging } from './staging.js';

// Listings re-read when the CMS changed under us, before giving up on proving deletions.
const MAX_LISTING_ATTEMPTS = 3;

export interface ReadDeps {
  cms: CmsAdapter;
  clock: Clock;
  pageSize: number;
  overlapSeconds: number;
  signal?: AbortSignal;
  showProgress?: boolean;
}

export interface LocaleRead {
  /** What the apply step needs for this locale. */
  input: LocaleInput;
  fetched: number;
  rejected: number;
  warnings: string[];
  /**
   * False when the listing kept changing while it was read, to the last attempt: a record may
   * have been skipped, so the incremental cursor must not move past this run's window.
   */
  settled: boolean;
}

export interface ReadRequest {
  kind: 'full' | 'incremental';
  locale: Locale;
  /** The incremental listing's updated_since; none on a full sync. */
  since: string | undefined;
  /**
   * Where the next incremental sync would start (none before the first sync): changes since
   * then may be newer than the snapshot, so a full listing's check for changes reaches back to it.
   */
  cursor: string | undefined;
}

/**
 * Reads one locale from the CMS into staging: its sections, then its article listing (all
 * published records on a full sync, changes since `since` on an incremental one), read again
 * when the CMS changed while it was read, so that a full sync removes only what it can prove gone.
 */
export async function readLocale(
  deps: ReadDeps,
  staging: Staging,
  request: ReadRequest,
  log: Logger,
): Promise<LocaleRead> {
  const { cms, signal } = deps;
  const { kind, locale, since } = request;
  const { sections, rejected: badSections } = await cms.listSections(locale, signal);
  for (const r of badSections) {
    log.warn({ locale, cmsId: r.cmsId, reason: r.reason }, `rejected CMS section ${r.cmsId ?? '(unreadable id)'}: ${r.reason}`);
  }
  const warnings: string[] = [];
  const readStarted = performance.now();
  const onPage = progressReporter(log, deps.showProgress ?? false, `${kind} ${locale}`);
  let rejected = new Set<string>();
  let provable = true;
  let settled = true;
  for (let attempt = 1; ; attempt += 1) {
    // A read again stands alone: a record an earlier read staged may since have been
    // unpublished or deleted, and must not be kept (or inserted) on the strength of it.
    if (attempt > 1) {
      staging.clearLocale(locale);
      rejected = new Set();
      provable = true;
    }
    // Changes since a little before the listing began reveal what moved while it was read;
    // asked from the cursor when that is earlier, also a record edited since the last sync.
    const listingStart = formatUtcSeconds(deps.clock() - deps.overlapSeconds * 1000);
    const listing = await stageListing(
      cms,
      staging,
      { locale, perPage: deps.pageSize, publishedOnly: kind === 'full', updatedSince: since },
      { signal, logger: log, onPage },
    );
    for (const r of listing.rejected) rejected.add(r);
    if (listing.rejectedWithoutId) provable = false;
    const changesSince = earliest(listingStart, request.cursor);
    const stable =
      listing.stable && (kind === 'incremental' || (await fullListingComplete(deps, staging, { locale, provable, changesSince })));
    if (stable) break;
    if (attempt === MAX_LISTING_ATTEMPTS) {
      provable = false;
      settled = false;
      warnings.push(
        kind === 'full'
          ? `${locale}: the CMS kept changing while it was read; nothing was removed this run`
          : `${locale}: the CMS kept changing while it was read; the next run reads these changes again`,
      );
      break;
    }
    log.warn({ locale, attempt }, 'the CMS changed while it was read; reading the listing again');
  }
  if (kind === 'full' && !provable && warnings.length === 0) {
    warnings.push(`${locale}: a record without a readable id was rejected; nothing was removed this run`);
  }
  const staged = staging.count(locale);
  log.info({ locale, records: staged, ms: Math.round(performance.now() - readStarted) }, `read ${staged} ${locale} records from the CMS`);
  const input: LocaleInput = { locale, sections, mode: kind, removeMissing: provable, keepSections: badSections.length > 0 };
  return { input, fetched: staged, rejected: rejected.size + badSections.length, warnings, settled };
}

/**
 * A full listing decides what to remove: check that nothing slipped between its pages. First
 * the stored articles it lacks (unless nothing will be removed anyway): one still published
 * was skipped. Then the changes since `changesSince`, asked last so that they also cover
 * whatever changed while the candidates were looked up.
 */
async function fullListingComplete(
  deps: ReadDeps,
  staging: Staging,
  check: { locale: Locale; provable: boolean; changesSince: string },
): Promise<boolean> {
  const { cms, signal } = deps;
  const query = { locale: check.locale, perPage: deps.pageSize };
  if (check.provable && (await anyCandidateListed(cms, query, staging.missingFromListing(check.locale), signal))) return false;
  return !(await changedDuringListing(cms, staging, { ...query, since: check.changesSince }, signal));
}

/** The earlier of two instants formatted alike (formatUtcSeconds); `a` when there is no `b`. */
function earliest(a: string, b: string | undefined): string {
  return b !== undefined && b < a ? b : a;
}
