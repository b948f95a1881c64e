import { Command, CommanderError } from 'commander';
import { existsSync } from 'node:fs';
import { loadCliConfig, type CliConfig } from '../config/cli.js';
import { KeysDatabaseMissingError } from '../db/keys/keys-connection.js';
import { UsageError } from '../errors.js';
import { backupDatabase, restoreKeys } from '../keys/backup.js';
import { parseDuration } from '../keys/duration.js';
import { appendRevocation } from '../keys/revocation-log.js';
import { createKey, listKeys, parseRate, revokeKey, rotateKey, setKeyRate, setKeyScope, validPartnerName, type ScopeChange } from '../keys/manage.js';
import { knownSections } from '../keys/known-sections.js';
import { parseLocales, parseSections } from '../keys/scope.js';
import { openKeys, type OpenedKeys } from '../keys/open.js';
import { runMain } from '../lib/main-guard.js';
import { systemClock } from '../lib/time.js';
import { keysDatabaseFailure } from './keys-failure.js';
import { createdLines, initLines, keyTable, rateLine, restoredLines, revokedLine, rotatedLines, scopeLine, usageCsv, usageTable } from './keys-output.js';
import { usageReport } from '../keys/usage-report.js';

/*
 * The editors' key tool: parses arguments, calls src/keys/, prints. Output for people by
 * default, `--json` (one JSON line) for scripts; any problem is one line on stderr and exit
 * code 1.
 */

// Output is printed only once a command's work is committed, so a failing stdout never
// leaves a change half done. A reader that stops early (`keys list | head -2`) has what it
// wanted: the rest is dropped and the exit code stays 0, as for any Unix filter. Any other
// failure (a full disk) is one line and exit 1, since the printed key or result never arrived.
let stdoutGone = false;
/** A key created by this command, shown once and nowhere else: if its line is lost, say so. */
let shownOnce: { id: number; partner: string } | undefined;
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  stdoutGone = true;
  if (shownOnce) {
    process.stderr.write(
      `the new key ${shownOnce.id} (${shownOnce.partner}) could not be shown (${error.code ?? error.message}); it is not stored anywhere readable: revoke it ("npm run keys -- revoke ${shownOnce.id}") and create another\n`,
    );
    process.exitCode = 1;
    return;
  }
  if (error.code === 'EPIPE') return;
  process.stderr.write(`cannot write the output (${error.code ?? error.message}): the command's changes, if any, are saved; "npm run keys -- list" shows them\n`);
  process.exitCode = 1;
});
const out = (line: string): void => {
  if (!stdoutGone) process.stdout.write(`${line}\n`);
};
const print = (json: boolean | undefined, value: unknown, lines: () => string[]): void =>
  json ? out(JSON.stringify(value)) : lines().forEach(out);

let config: Readonly<CliConfig> | undefined;
const settings = () => (config ??= loadCliConfig(process.env));

function open(create = false, importAlways = false): OpenedKeys {
  const { keysDatabasePath, databasePath, busyTimeoutMs } = settings();
  try {
    return openKeys(keysDatabasePath, databasePath, { busyTimeoutMs, create, importAlways });
  } catch (error) {
    if (error instanceof KeysDatabaseMissingError) throw new UsageError(error.message);
    // A damaged file, a locked one...: the same line saying what to do as under a command.
    throw keysDatabaseFailure(error, keysDatabasePath, busyTimeoutMs) ?? new UsageError(`cannot open the keys database at ${keysDatabasePath}: ${(error as Error).message}`);
  }
}

function keyId(raw: string): number {
  if (!/^[0-9]{1,15}$/.test(raw)) throw new UsageError(`a key id is a whole number as shown by list, got "${raw}"`);
  return Number(raw);
}

/**
 * The contract: a section slug the CMS does not know (yet) is accepted, with a warning (the
 * editor may be preparing a section); a typo shows here. Said on stderr, so --json stays one line.
 */
function warnUnknownSections(sections: readonly string[] | null | undefined): void {
  if (!sections) return;
  const known = knownSections(settings().databasePath);
  const unknown = known === undefined ? [] : sections.filter((s) => !known.has(s));
  if (known === undefined) {
    process.stderr.write(`warning: the snapshot (DATABASE_PATH) could not be read, so the sections ${sections.join(', ')} were not checked against the CMS's\n`);
  } else if (unknown.length > 0) {
    process.stderr.write(
      `warning: the CMS has no section ${unknown.join(', ')} (yet): accepted; the key sees its articles once the CMS has them (check the spelling)\n`,
    );
  }
}

function program(): Command {
  const cli = new Command('keys')
    .description("Manage partners' API keys (in the keys database, KEYS_DATABASE_PATH)")
    .exitOverride()
    .configureOutput({ outputError: () => {} })
    .showSuggestionAfterError(false);

  cli
    .command('init')
    .description("create the keys database if needed and take over the keys of the snapshot's old api_keys table")
    .option('--json', 'print {"path","created","snapshot_path","snapshot_found","imported","already_present","revocations_applied"}')
    .action((options: { json?: boolean }) => {
      const { db, created, imported } = open(true, true);
      db.$client.close();
      const { keysDatabasePath: path, databasePath: snapshotPath } = settings();
      const result = imported ?? { snapshot: 'missing', imported: 0, alreadyPresent: 0, revocationsApplied: 0 };
      const json = {
        path,
        created,
        snapshot_path: snapshotPath,
        snapshot_found: result.snapshot !== 'missing',
        imported: result.imported,
        already_present: result.alreadyPresent,
        revocations_applied: result.revocationsApplied,
      };
      print(options.json, json, () => initLines(path, created, snapshotPath, result));
    });

  cli
    .command('create')
    .description('create a key for a partner and print it once')
    .requiredOption('--partner <name>', "the partner's name, e.g. \"Acme Media\"")
    .option('--expires-in <duration>', 'the key stops working after this long, e.g. 90d (default: never)')
    .option('--rate <per-minute>', "the key's own request rate per minute (default: the API's configured rate)")
    .option('--locales <list>', 'only these locales, comma-separated, e.g. zh (default: all)')
    .option('--sections <list>', 'only these section slugs, comma-separated, e.g. lasers,optics (default: all)')
    .option('--create', 'create the keys database if it does not exist yet (as init does)')
    .option('--json', 'print {"id","partner","key","created_at","expires_at","rate_limit_per_minute","locales","sections"}')
    .action((options: { partner: string; expiresIn?: string; rate?: string; locales?: string; sections?: string; create?: boolean; json?: boolean }) => {
      // Checked before opening, so a bad argument does not create an empty database.
      const partner = validPartnerName(options.partner);
      const expiresInMs = options.expiresIn === undefined ? undefined : parseDuration(options.expiresIn, '--expires-in');
      const rateLimitPerMinute = options.rate === undefined ? null : parseRate(options.rate);
      const locales = options.locales === undefined ? undefined : parseLocales(options.locales);
      const sections = options.sections === undefined ? undefined : parseSections(options.sections);
      const { db } = open(options.create);
      warnUnknownSections(sections);
      const created = createKey(db, partner, systemClock, { expiresInMs, rateLimitPerMinute, ...(locales && { locales }), ...(sections && { sections }) });
      shownOnce = created;
      print(options.json, created, () => createdLines(created));
    });

  cli
    .command('list')
    .description('list keys with their status, expiry, last use and rate (never the keys themselves)')
    .option('--json', 'print a JSON array')
    .action((options: { json?: boolean }) => {
      const keys = listKeys(open().db, systemClock);
      if (!options.json && keys.length === 0) return out('No keys yet. Create one with: npm run keys -- create --partner "Name"');
      print(options.json, keys, () => keyTable(keys));
    });

  cli
    .command('revoke')
    .description('revoke a key: requests with it are refused from the next one on')
    .argument('<id>', 'the key id, as shown by list')
    .option('--json', 'print the revoked key as JSON')
    .action((rawId: string, options: { json?: boolean }) => {
      const { key, alreadyRevoked, revocation } = revokeKey(open().db, keyId(rawId), systemClock);
      // Committed first: the key is refused from now on whatever the log does. The log lets a
      // restore keep it revoked even when this database is lost (src/keys/revocation-log.ts).
      try {
        appendRevocation(settings().keysDatabasePath, revocation);
      } catch (error) {
        process.stderr.write(
          `warning: key ${key.id} is revoked, but the revocation log beside the keys database could not be written (${(error as NodeJS.ErrnoException).code ?? 'error'}): back up the keys database now ("npm run keys -- backup")\n`,
        );
      }
      print(options.json, { ...key, already_revoked: alreadyRevoked }, () => [revokedLine(key, alreadyRevoked)]);
    });

  cli
    .command('rotate')
    .description('give the partner a new key; the old one keeps working until the overlap ends')
    .argument('<id>', 'the key id, as shown by list')
    .option('--overlap <duration>', 'how long the old key keeps working, e.g. 7d, or 0', '7d')
    .option('--expires-in <duration>', 'the new key stops working after this long (default: the old key\'s lifetime)')
    .option('--json', 'print {"old": key, "created": new key}')
    .action((rawId: string, options: { overlap: string; expiresIn?: string; json?: boolean }) => {
      const id = keyId(rawId);
      const overlapMs = parseDuration(options.overlap, '--overlap', { allowZero: true });
      const expiresInMs = options.expiresIn === undefined ? undefined : parseDuration(options.expiresIn, '--expires-in');
      const { old, created } = rotateKey(open().db, id, systemClock, { overlapMs, expiresInMs });
      shownOnce = created;
      print(options.json, { old, created }, () => rotatedLines(old, created));
    });

  cli
    .command('set-rate')
    .description("set a key's own request rate per minute, or back to the configured default")
    .argument('<id>', 'the key id, as shown by list')
    .argument('<rate>', 'requests per minute (a whole number), or "default"')
    .option('--json', 'print the key as JSON')
    .action((rawId: string, rawRate: string, options: { json?: boolean }) => {
      const id = keyId(rawId);
      const key = setKeyRate(open().db, id, parseRate(rawRate), systemClock);
      print(options.json, key, () => [rateLine(key)]);
    });

  cli
    .command('scope')
    .description("change what a key may see (its locales or sections); applies from the API's next request")
    .argument('<id>', 'the key id, as shown by list')
    .option('--locales <list>', 'only these locales, comma-separated, e.g. zh')
    .option('--sections <list>', 'only these section slugs, comma-separated, e.g. lasers,optics')
    .option('--all-locales', 'every locale')
    .option('--all-sections', 'every section')
    .option('--json', 'print the key as JSON')
    .action((rawId: string, options: { locales?: string; sections?: string; allLocales?: boolean; allSections?: boolean; json?: boolean }) => {
      const id = keyId(rawId);
      if (options.locales !== undefined && options.allLocales) throw new UsageError('give --locales or --all-locales, not both');
      if (options.sections !== undefined && options.allSections) throw new UsageError('give --sections or --all-sections, not both');
      const change: ScopeChange = {};
      if (options.locales !== undefined) change.locales = parseLocales(options.locales);
      if (options.allLocales) change.locales = null;
      if (options.sections !== undefined) change.sections = parseSections(options.sections);
      if (options.allSections) change.sections = null;
      if (!('locales' in change) && !('sections' in change)) {
        throw new UsageError('say what the key may see: --locales, --sections, --all-locales or --all-sections');
      }
      const db = open().db;
      warnUnknownSections(change.sections);
      const key = setKeyScope(db, id, change, systemClock);
      print(options.json, key, () => [scopeLine(key)]);
    });

  cli
    .command('usage')
    .description('print usage per key and UTC day: requests per endpoint, 304s, 4xx, 5xx, distinct articles read')
    .option('--partner <name>', "only this partner's keys")
    .option('--id <id>', 'only this key')
    .option('--from <YYYY-MM-DD>', 'from this UTC day (inclusive)')
    .option('--to <YYYY-MM-DD>', 'up to this UTC day (inclusive)')
    .option('--json', 'print a JSON array of rows')
    .option('--csv', 'print CSV with a header line')
    .action((options: { partner?: string; id?: string; from?: string; to?: string; json?: boolean; csv?: boolean }) => {
      if (options.json && options.csv) throw new UsageError('use --json or --csv, not both');
      const id = options.id === undefined ? undefined : keyId(options.id);
      const rows = usageReport(open().db, { partner: options.partner, id, from: options.from, to: options.to });
      if (options.csv) return usageCsv(rows).forEach(out);
      if (!options.json && rows.length === 0) return out('No usage recorded for these keys and days.');
      print(options.json, rows, () => usageTable(rows));
    });

  cli
    .command('backup')
    .description('copy the keys database (or with --snapshot the snapshot) to <file>, safely while everything runs')
    .argument('<file>', 'where to write the copy; must not exist yet')
    .option('--snapshot', 'back up the snapshot (DATABASE_PATH) instead of the keys database')
    .option('--json', 'print {"path","bytes"}')
    .action(async (file: string, options: { snapshot?: boolean; json?: boolean }) => {
      const { keysDatabasePath, databasePath, busyTimeoutMs } = settings();
      const source = options.snapshot ? databasePath : keysDatabasePath;
      if (!existsSync(source)) throw new UsageError(`nothing to back up: no ${options.snapshot ? 'snapshot' : 'keys database'} at ${source}`);
      if (existsSync(file)) throw new UsageError(`${file} already exists: choose a new file name for the backup`);
      const result = await backupDatabase(source, file, busyTimeoutMs).catch((error: Error) => {
        throw new UsageError(`backup failed: ${error.message}`);
      });
      print(options.json, result, () => [`Backed up ${source} to ${result.path} (${result.bytes} bytes).`]);
    });

  cli
    .command('restore')
    .description('restore the keys database from a backup, in place, while the API runs; revoked keys stay revoked')
    .argument('<file>', 'a backup written by "keys backup"')
    .option('--json', 'print {"path","keys","revocations_kept","keys_not_in_backup","revoked_after_backup","not_in_backup","live_database","revocations_logged","usage_days_carried","warning"}')
    .action(async (file: string, options: { json?: boolean }) => {
      const { keysDatabasePath, busyTimeoutMs } = settings();
      const result = await restoreKeys(file, keysDatabasePath, busyTimeoutMs).catch((error: Error) => {
        throw new UsageError(`restore failed: ${error.message}`);
      });
      // Loud whatever the format: stderr, which --json scripts still show to whoever runs them.
      if (result.warning) process.stderr.write(`WARNING: ${result.warning}\n`);
      print(options.json, { path: keysDatabasePath, ...result }, () => restoredLines(keysDatabasePath, result));
    });

  return cli;
}

runMain(async () => {
  const cli = program();
  if (process.argv.length <= 2) {
    throw new UsageError('missing command: use init, create, list, scope, revoke, rotate, set-rate, usage, backup or restore (see --help)');
  }
  try {
    await cli.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are not errors.
      if (error.exitCode === 0) return;
      throw new UsageError(error.message.replace(/^error: /, '').split('\n')[0] ?? 'invalid arguments');
    }
    // Every command's database work ends here: one place turns its failures into one line.
    throw (config && keysDatabaseFailure(error, config.keysDatabasePath, config.busyTimeoutMs)) ?? error;
  }
});
