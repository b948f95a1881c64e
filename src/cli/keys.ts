import { Command, CommanderError } from 'commander';
import { loadCliConfig } from '../config.js';
import { openWriter, type Db } from '../db/connection.js';
import { UsageError } from '../errors.js';
import { createKey, listKeys, revokeKey, validPartnerName, type KeySummary } from '../keys/manage.js';
import { runMain } from '../main-guard.js';
import { systemClock } from '../time.js';

/*
 * The editors' key tool: parses arguments, calls src/keys/, prints. Output for people by
 * default, `--json` for scripts; any problem is one line on stderr and exit code 1.
 */

const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

function open(): Db {
  const config = loadCliConfig(process.env);
  try {
    return openWriter(config.databasePath, { busyTimeoutMs: config.busyTimeoutMs });
  } catch (error) {
    throw new UsageError(`cannot open the database at ${config.databasePath}: ${(error as Error).message}`);
  }
}

function table(keys: KeySummary[]): string[] {
  const rows = [
    ['ID', 'PARTNER', 'PREFIX', 'CREATED', 'REVOKED'],
    ...keys.map((k) => [String(k.id), k.partner, `${k.prefix}…`, k.created_at, k.revoked_at ?? '-']),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => [...r[i]!].length)));
  return rows.map((r) => r.map((cell, i) => cell + ' '.repeat(widths[i]! - [...cell].length)).join('  ').trimEnd());
}

function program(): Command {
  const cli = new Command('keys')
    .description("Manage partners' API keys")
    .exitOverride()
    .configureOutput({ outputError: () => {} })
    .showSuggestionAfterError(false);

  cli
    .command('create')
    .description('create a key for a partner and print it once')
    .requiredOption('--partner <name>', "the partner's name, e.g. \"Acme Media\"")
    .option('--json', 'print {"id","partner","key","created_at"}')
    .action((options: { partner: string; json?: boolean }) => {
      // Checked before opening, so a bad name does not create an empty database.
      const partner = validPartnerName(options.partner);
      const created = createKey(open(), partner, systemClock);
      if (options.json) return out(JSON.stringify(created));
      out(`Created key ${created.id} for ${created.partner} (${created.created_at}):`);
      out(created.key);
      out('Copy it now and send it to the partner over a safe channel: it cannot be shown again.');
    });

  cli
    .command('list')
    .description('list keys (never the keys themselves)')
    .option('--json', 'print a JSON array')
    .action((options: { json?: boolean }) => {
      const keys = listKeys(open());
      if (options.json) return out(JSON.stringify(keys));
      if (keys.length === 0) return out('No keys yet. Create one with: npm run keys -- create --partner "Name"');
      table(keys).forEach((line) => out(line));
    });

  cli
    .command('revoke')
    .description('revoke a key: requests with it are refused from the next one on')
    .argument('<id>', 'the key id, as shown by list')
    .option('--json', 'print the revoked key as JSON')
    .action((rawId: string, options: { json?: boolean }) => {
      if (!/^[0-9]{1,15}$/.test(rawId)) throw new UsageError(`revoke needs a key id (a whole number), got "${rawId}"`);
      const { key, alreadyRevoked } = revokeKey(open(), Number(rawId), systemClock);
      if (options.json) return out(JSON.stringify({ ...key, already_revoked: alreadyRevoked }));
      out(
        alreadyRevoked
          ? `Key ${key.id} (${key.partner}, ${key.prefix}…) was already revoked on ${key.revoked_at}.`
          : `Revoked key ${key.id} (${key.partner}, ${key.prefix}…): requests with it are refused from now on.`,
      );
    });

  return cli;
}

runMain(async () => {
  const cli = program();
  if (process.argv.length <= 2) throw new UsageError('missing command: use create, list or revoke (see --help)');
  try {
    await cli.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are not errors.
      if (error.exitCode === 0) return;
      throw new UsageError(error.message.replace(/^error: /, '').split('\n')[0] ?? 'invalid arguments');
    }
    throw error;
  }
});
