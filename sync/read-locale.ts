import type { Locale } from '../src/locale.js';
import type { Logger } from '../src/logger.js';
import { formatUtcSeconds, type Clock } from '../src/time.js';
import type { LocaleInput } from './apply.js';
import type { CmsAdapter } from './cms/types.js';
import { changedDuringListing, stageListing } from './listing.js';
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
}

/**
 * Reads one locale from the CMS into staging: its sections, then its article listing (all
 * published records on a full sync, changes since `since` on an incremental one), read again
 * when the CMS changed while it was read, so that a full sync removes only what it can prove gone.
 */
export async function readLocale(
  deps: ReadDeps,
  staging: Staging,
  request: { kind: 'full' | 'incremental'; locale: Locale; since: string | undefined },
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
  for (let attempt = 1; ; attempt += 1) {
    // A read again stands alone: a record an earlier read staged may since have been
    // unpublished or deleted, and must not be kept (or inserted) on the strength of it.
    if (attempt > 1) {
      staging.clearLocale(locale);
      rejected = new Set();
      provable = true;
    }
    // Changes since a little before the listing began reveal what moved while it was read.
    const listingStart = formatUtcSeconds(deps.clock() - deps.overlapSeconds * 1000);
    const listing = await stageListing(
      cms,
      staging,
      { locale, perPage: deps.pageSize, publishedOnly: kind === 'full', updatedSince: since },
      { signal, logger: log, onPage },
    );
    for (const r of listing.rejected) rejected.add(r);
    if (listing.rejectedWithoutId) provable = false;
    // A full listing decides what to remove: check that nothing slipped between its pages.
    const stable =
      listing.stable &&
      (kind === 'incremental' ||
        !(await changedDuringListing(cms, staging, { locale, perPage: deps.pageSize, since: listingStart }, signal)));
    if (stable) break;
    if (attempt === MAX_LISTING_ATTEMPTS) {
      provable = false;
      warnings.push(`${locale}: the CMS kept changing while it was read; nothing was removed this run`);
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
  return { input, fetched: staged, rejected: rejected.size + badSections.length, warnings };
}
