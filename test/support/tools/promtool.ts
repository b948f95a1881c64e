import { execFileSync, spawnSync } from 'node:child_process';

/*
 * Prometheus's promtool (Debian's `prometheus` package), for the tests that check the shipped
 * alert rules and the processes' real scrapes the way operators' Prometheus will read them.
 * Installed with apt-get when missing and we may (root, Debian); otherwise the caller skips
 * and says why.
 */

function promtoolPath(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' });
  return found.status === 0 && found.stdout.trim() ? found.stdout.trim() : undefined;
}

let resolved: string | undefined | null;

/** The promtool command, installing Debian's prometheus package once when it is missing. */
export function ensurePromtool(): string | undefined {
  if (resolved !== undefined) return resolved ?? undefined;
  let path = promtoolPath();
  const aptGet = spawnSync('sh', ['-c', 'command -v apt-get']).status === 0;
  if (!path && process.getuid?.() === 0 && aptGet) {
    try {
      execFileSync(
        'sh',
        ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus'],
        { stdio: ['ignore', 'ignore', 'inherit'], timeout: 600_000 },
      );
    } catch {
      // Said by the caller's skip reason: promtool is still missing.
    }
    path = promtoolPath();
  }
  resolved = path ?? null;
  return path;
}

export interface PromtoolResult {
  code: number | null;
  output: string;
}

/** Runs promtool with `args`, `input` on its stdin; stdout and stderr together. */
export function promtool(args: string[], input?: string): PromtoolResult {
  const command = ensurePromtool();
  if (!command) throw new Error('promtool is not installed');
  const result = spawnSync(command, args, { input, encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}` };
}
