import { isLocale, LOCALES, type Locale } from '../locale.js';
import { LocaleNotAllowedError, UsageError } from '../errors.js';

/*
 * What a key may see (the contract's "key scopes"): some locales and some sections, each
 * "all" when not set. Stored as two comma-separated columns of api_keys (null = all), with a
 * version that every change moves and a history of every version (key_scope_changes), which
 * the change feed needs to tell what entered and what left the scope after a cursor.
 */

export interface KeyScope {
  /** The locales the key may use; null = every locale. */
  readonly locales: readonly Locale[] | null;
  /** The section slugs the key sees, in every locale; null = every section. */
  readonly sections: readonly string[] | null;
  /** The scope's version for this key (0: never scoped): change-feed cursors carry it. */
  readonly version: number;
  /**
   * A canonical name of the scope and its version: part of every cache key of a scoped key's
   * answer, so no cached answer ever reaches a key whose scope differs.
   */
  readonly tag: string;
  /** The sections of each earlier version, for the change feed (null = every section). */
  readonly history: ReadonlyMap<number, readonly string[] | null>;
}

/** Slugs as the CMS writes them (src/db/snapshot: sections.slug). */
const SLUG = /^[a-z0-9][a-z0-9-]{0,99}$/;

/** A stored column back to a list; null (or empty) = all. */
export function splitScope(column: string | null): string[] | null {
  if (column === null || column === '') return null;
  return column.split(',');
}

/** A list to its stored column: sorted and unique, so equal scopes have equal columns. */
export function joinScope(values: readonly string[] | null): string | null {
  return values === null ? null : [...new Set(values)].sort().join(',');
}

/** `--locales` of the CLI: known locales only. */
export function parseLocales(raw: string): Locale[] {
  const values = raw.split(',').map((v) => v.trim()).filter((v) => v !== '');
  if (values.length === 0) throw new UsageError(`--locales needs at least one locale (${LOCALES.join(', ')})`);
  const unknown = values.filter((v) => !isLocale(v));
  if (unknown.length > 0) {
    throw new UsageError(`unknown locale ${unknown.map((v) => `"${v}"`).join(', ')}: the locales are ${LOCALES.join(', ')}`);
  }
  return [...new Set(values as Locale[])].sort();
}

/** `--sections` of the CLI: section slugs (whether the CMS knows them is checked apart, as a warning). */
export function parseSections(raw: string): string[] {
  const values = raw.split(',').map((v) => v.trim()).filter((v) => v !== '');
  if (values.length === 0) throw new UsageError('--sections needs at least one section slug, e.g. --sections lasers,optics');
  const bad = values.filter((v) => !SLUG.test(v));
  if (bad.length > 0) {
    throw new UsageError(`${bad.map((v) => `"${v}"`).join(', ')} is not a section slug (lower-case letters, digits and -)`);
  }
  return [...new Set(values)].sort();
}

/** The scope as `list` and the CLI print it. */
export function describeScope(locales: readonly string[] | null, sections: readonly string[] | null): string {
  if (locales === null && sections === null) return 'all';
  return `locales ${locales === null ? 'all' : locales.join(',')}; sections ${sections === null ? 'all' : sections.join(',')}`;
}

export function makeScope(
  locales: string | null,
  sections: string | null,
  version: number,
  history: ReadonlyMap<number, readonly string[] | null>,
): KeyScope | null {
  // A key that never had a scope is served exactly as before scopes existed.
  if (version === 0) return null;
  const l = splitScope(locales) as Locale[] | null;
  const s = splitScope(sections);
  return Object.freeze({
    locales: l,
    sections: s,
    version,
    tag: `v${version}:${locales ?? '*'}:${sections ?? '*'}`,
    history,
  });
}

/** Whether the scope lets the key use the locale (every locale without a scope). */
export function allowsLocale(scope: KeyScope | null | undefined, locale: Locale): boolean {
  return !scope?.locales || scope.locales.includes(locale);
}

/** Throws the 403 locale_not_allowed, naming the locales the key may use, for a locale outside its scope. */
export function assertLocaleAllowed(scope: KeyScope | null | undefined, locale: Locale): void {
  if (!allowsLocale(scope, locale)) throw new LocaleNotAllowedError(locale, scope!.locales!);
}

/** Whether an article of `section` is in the scope. */
export function allowsSection(scope: KeyScope | null | undefined, section: string): boolean {
  return !scope?.sections || scope.sections.includes(section);
}

/** The part of a cache key that names the scope: empty without one, so unscoped keys share answers as before. */
export function scopeKey(scope: KeyScope | null | undefined): string {
  return scope ? `|scope=${scope.tag}` : '';
}
