import type { ImportResult } from '../keys/open.js';
import type { KeyMention, RestoreResult } from '../keys/backup.js';
import type { CreatedKey, KeySummary } from '../keys/manage.js';
import type { UsageRow } from '../keys/usage-report.js';
import { printableName } from '../keys/partner-name.js';
import { describeScope } from '../keys/scope.js';

/*
 * What the keys CLI prints for people. Scripts use --json, which prints the same objects
 * as one JSON line. Partner names go through printableName: a name stored before names were
 * checked cannot garble the terminal.
 */

const rate = (k: { rate_limit_per_minute: number | null }) =>
  k.rate_limit_per_minute === null ? 'default' : `${k.rate_limit_per_minute}/min`;

export function keyTable(keys: KeySummary[]): string[] {
  const scoped = keys.some((k) => k.locales !== undefined);
  const rows = [
    ['ID', 'PARTNER', 'PREFIX', 'STATUS', 'CREATED', 'EXPIRES', 'LAST USED', 'RATE', 'REVOKED', ...(scoped ? ['SCOPE'] : [])],
    ...keys.map((k) => [
      String(k.id),
      printableName(k.partner),
      `${k.prefix}…`,
      k.replaced_by === null ? k.status : `${k.status} (rotated to ${k.replaced_by})`,
      k.created_at,
      k.expires_at ?? 'never',
      k.last_used_at ?? '-',
      rate(k),
      k.revoked_at ?? '-',
      // Shown once some key has a scope: until then the table is the one editors know.
      ...(scoped ? [describeScope(k.locales ?? null, k.sections ?? null)] : []),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => [...r[i]!].length)));
  return rows.map((r) => r.map((cell, i) => cell + ' '.repeat(widths[i]! - [...cell].length)).join('  ').trimEnd());
}

const USAGE_FIELDS = [
  ['day', 'DAY'],
  ['key_id', 'KEY'],
  ['partner', 'PARTNER'],
  ['articles', 'ARTICLES'],
  ['article', 'ARTICLE'],
  ['categories', 'CATEGORIES'],
  ['search', 'SEARCH'],
  ['changes', 'CHANGES'],
  ['not_modified', '304'],
  ['client_errors', '4XX'],
  ['server_errors', '5XX'],
  ['distinct_articles', 'DISTINCT ARTICLES'],
] as const satisfies readonly (readonly [keyof UsageRow, string])[];

/** `keys usage` for people: one row per key and day, numbers aligned right. */
export function usageTable(rows: UsageRow[]): string[] {
  const cells = [
    USAGE_FIELDS.map(([, title]) => title as string),
    ...rows.map((r) => USAGE_FIELDS.map(([field]) => (field === 'partner' ? printableName(r.partner) : String(r[field])))),
  ];
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((c) => [...c[i]!].length)));
  const left = (i: number) => i <= 2;
  return cells.map((c) =>
    c
      .map((cell, i) => {
        const pad = ' '.repeat(widths[i]! - [...cell].length);
        return left(i) ? cell + pad : pad + cell;
      })
      .join('  ')
      .trimEnd(),
  );
}

/**
 * `keys usage --csv` (RFC 4180): the JSON field names as the header. A partner name is
 * quoted when it holds a comma or a quote, and prefixed with ' when it starts like a formula,
 * so a spreadsheet opening the file shows it as text.
 */
export function usageCsv(rows: UsageRow[]): string[] {
  return [USAGE_FIELDS.map(([field]) => field).join(','), ...rows.map((r) => USAGE_FIELDS.map(([field]) => csvCell(r[field])).join(','))];
}

function csvCell(value: string | number): string {
  if (typeof value === 'number') return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function initLines(path: string, created: boolean, snapshotPath: string, result: ImportResult): string[] {
  const first = `Keys database ${created ? 'created' : 'already there'} at ${path}.`;
  // Said plainly, so that an operator who mistyped DATABASE_PATH while upgrading sees it.
  if (result.snapshot === 'missing') {
    return [
      first,
      `No snapshot at ${snapshotPath} (DATABASE_PATH): nothing to import. Right for a new installation; when upgrading, fix DATABASE_PATH and run init again.`,
    ];
  }
  if (result.snapshot === 'no_keys_table') return [first, `The snapshot at ${snapshotPath} has no api_keys table: nothing to import.`];
  const lines = [first, `Imported ${plural(result.imported, 'key')} from the snapshot at ${snapshotPath} (${result.alreadyPresent} already there).`];
  // Revoked with the old CLI since a first init: said, so the editor knows it took effect.
  if (result.revocationsApplied > 0) {
    lines.push(`Revoked ${plural(result.revocationsApplied, 'key')} that the snapshot had revoked since (a revocation is never undone).`);
  }
  return lines;
}

export function createdLines(created: CreatedKey, verb = 'Created'): string[] {
  const terms = [
    created.expires_at ? `expires ${created.expires_at}` : 'never expires',
    `rate ${rate(created)}`,
    ...(created.locales !== undefined ? [`scope: ${describeScope(created.locales, created.sections ?? null)}`] : []),
  ];
  return [
    `${verb} key ${created.id} for ${printableName(created.partner)} (${created.created_at}; ${terms.join(', ')}):`,
    created.key,
    'Copy it now and send it to the partner over a safe channel: it cannot be shown again.',
  ];
}

export function rotatedLines(old: KeySummary, created: CreatedKey): string[] {
  return [
    ...createdLines(created, 'Rotated: new'),
    `The old key ${old.id} (${old.prefix}…) keeps working until ${old.expires_at}, then answers expired_api_key.`,
  ];
}

export function revokedLine(key: KeySummary, alreadyRevoked: boolean): string {
  const who = `${key.id} (${printableName(key.partner)}, ${key.prefix}…)`;
  return alreadyRevoked
    ? `Key ${who} was already revoked on ${key.revoked_at}.`
    : `Revoked key ${who}: requests with it are refused from now on.`;
}

export function rateLine(key: KeySummary): string {
  return `Key ${key.id} (${printableName(key.partner)}, ${key.prefix}…) now has rate ${rate(key)}.`;
}

export function restoredLines(path: string, result: RestoreResult): string[] {
  const lines = [`Restored ${plural(result.keys, 'key')} into ${path}.`];
  if (result.revoked_after_backup.length > 0) {
    lines.push(`Kept ${plural(result.revocations_kept, 'revocation')} made after the backup; still revoked:`);
    for (const k of result.revoked_after_backup) lines.push(`  ${mentioned(k)}, revoked ${k.revoked_at}`);
  }
  if (result.not_in_backup.length > 0) {
    lines.push(
      `Not in the backup (created after it), so no longer working: ${plural(result.keys_not_in_backup, 'key')}. Create a new key for each of these partners:`,
    );
    for (const k of result.not_in_backup) lines.push(`  ${mentioned(k)}, created ${k.created_at}`);
  }
  return lines;
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
const mentioned = (k: KeyMention) => `key ${k.id} (${printableName(k.partner)}, ${k.prefix}…)`;

export function scopeLine(key: KeySummary): string {
  const scope = describeScope(key.locales ?? null, key.sections ?? null);
  return `Key ${key.id} (${printableName(key.partner)}, ${key.prefix}…) now sees ${scope === 'all' ? 'everything' : scope}, from the API's next request.`;
}
