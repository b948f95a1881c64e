/*
 * The exposure rule, stated once. A partner sees an article when:
 *   1. its status is `published`;
 *   2. it has a publication time, and that time has come (a scheduled article appears by itself);
 *   3. its section exists in the same locale and is active.
 * Every place that applies the rule is built from this file, and
 * test/house/exposure-rule.test.ts checks all of them against `exposedFrom` on every
 * combination of the three conditions:
 * - the API's SQL (src/db/snapshot/content.ts): EXPOSED_JOIN and EXPOSED_WHERE, plus
 *   `published_at <= now` where the query has a "now";
 * - the change feed's writer (src/db/snapshot/feed-write.ts): `exposedFrom` on an ExposureRow;
 * - Meilisearch: only published articles are indexed (SEARCHABLE_WHERE, in
 *   src/db/snapshot/search-documents.ts), and `meilisearchExposureFilter` adds the section and
 *   time conditions to every search.
 * Publication times are stored as UTC ISO 8601 (`...Z`, normalised by the worker), so the SQL's
 * text comparison and the parsed comparison here agree.
 */

export const PUBLISHED_STATUS = 'published';

/** What the rule reads of an article and its section: the one row type of every check. */
export interface ExposureRow {
  status: string;
  published_at: string | null;
  /** The section's `active` (1 or 0); null when the article's section does not exist. */
  section_active: number | null;
}

/** SQL, articles as `a` and sections as `s`: only articles of an active section (rule 3). */
export const EXPOSED_JOIN = `JOIN sections s ON s.locale = a.locale AND s.slug = a.section_slug AND s.active = 1`;

/** SQL: rules 1 and 2 but for the time, which takes a parameter (`a.published_at <= ?`). */
export const EXPOSED_WHERE = `a.status = '${PUBLISHED_STATUS}' AND a.published_at IS NOT NULL`;

/** SQL: what an external search index holds (rule 1); its searches filter the rest. */
export const SEARCHABLE_WHERE = `a.status = '${PUBLISHED_STATUS}'`;

/** From when (epoch ms) the article is exposed, or undefined when never as it stands. */
export function exposedFrom(row: ExposureRow | undefined): number | undefined {
  if (!row || row.status !== PUBLISHED_STATUS || row.published_at === null || row.section_active !== 1) return undefined;
  const ms = Date.parse(row.published_at);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Whether the article is exposed at `nowMs`. */
export function isExposed(row: ExposureRow | undefined, nowMs: number): boolean {
  const from = exposedFrom(row);
  return from !== undefined && from <= nowMs;
}

/** A value inside a Meilisearch filter expression, quoted. */
const quote = (value: string) => `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;

/**
 * The Meilisearch filter clauses (all must hold) for rules 2 and 3, over the fields of
 * src/search/meilisearch/documents.ts: the article's section among `activeSections` (the
 * locale's active ones, or the one asked for if active) and its time (epoch seconds) come.
 */
export function meilisearchExposureFilter(activeSections: readonly string[], nowMs: number): string[] {
  return [`section_slug IN [${activeSections.map(quote).join(', ')}]`, `published_at_ts <= ${Math.floor(nowMs / 1000)}`];
}
