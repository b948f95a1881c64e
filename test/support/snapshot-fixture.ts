import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openWriter, type Db } from '../../src/db/sqlite/connection.js';
import type { RawArticle, RawSection } from '../../src/demo/cms-store.js';
import { LOCALES, type Locale } from '../../src/locale.js';
import { formatUtcSeconds } from '../../src/lib/time.js';
import { applyStaged } from '../../sync/apply.js';
import type { ListLimits } from '../../src/search/sqlite/common-lists.js';
import { parseArticle, parseSection } from '../../sync/cms/schemas.js';
import { Staging } from '../../sync/staging.js';

/** A fresh folder for a test's database files, removed by the returned cleanup. */
export function tempDir(prefix = 'syndication-test-'): { dir: string; path: (name: string) => string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, path: (name) => join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A CMS section tagged with its locale (the CMS says it in the request; fixtures in the record). */
export type FixtureSection = RawSection & { locale?: Locale };

export interface SnapshotContent {
  /** Sections without a locale belong to `en`. */
  sections: FixtureSection[];
  articles: RawArticle[];
  /** Locales to mark as synced even without content; all by default. */
  locales?: readonly Locale[];
  /** The sync time written to snapshot_state. */
  now?: number;
  /** Which words get champion lists (SEARCH_LISTS_*); the worker's defaults when absent. */
  listLimits?: ListLimits;
}

/**
 * Writes CMS-shaped records into a real snapshot file through the worker's own path (CMS
 * record parsing, staging, one apply transaction), as a full sync of each locale would.
 * Drafts and other unpublished records are never stored, exactly as with the worker.
 */
export function writeSnapshot(db: Db, content: SnapshotContent): void {
  const staging = new Staging(db);
  staging.clear();
  const locales = content.locales ?? LOCALES;
  const inputs = locales.map((locale) => {
    const sections = content.sections
      .filter((s) => (s.locale ?? 'en') === locale)
      .map((s) => mustParse(parseSection(s, locale)));
    const articles = content.articles.filter((a) => a.locale === locale).map((a) => mustParse(parseArticle(a, locale)));
    staging.stagePage(locale, articles, []);
    return { locale, sections, mode: 'full' as const, removeMissing: true };
  });
  applyStaged(db, staging, inputs, formatUtcSeconds(content.now ?? Date.now()), { listLimits: content.listLimits });
  staging.clear();
}

/** Creates (or updates) a snapshot file with the given content. */
export function buildSnapshot(path: string, content: SnapshotContent): void {
  const db = openWriter(path, { busyTimeoutMs: 5_000 });
  try {
    writeSnapshot(db, content);
  } finally {
    db.$client.close();
  }
}

function mustParse<T>(result: { ok: true; record: T } | { ok: false; rejected: { cmsId: string | null; reason: string } }): T {
  if (!result.ok) throw new Error(`fixture record rejected (${result.rejected.cmsId}): ${result.rejected.reason}`);
  return result.record;
}
