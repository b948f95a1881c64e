import { spawnSync } from 'node:child_process';

/*
 * Prometheus's promtool (Debian's `prometheus` package), for the tests that check the shipped
 * alert rules and the processes' real scrapes the way operators' Prometheus will read them.
 * Never installed from here: `.ci/run` installs it (see required-tool.ts for the rule).
 */

/** The promtool command on PATH, or undefined when it is not installed. */
export function findPromtool(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' });
  return found.status === 0 && found.stdout.trim() ? found.stdout.trim() : undefined;
}

export interface PromtoolResult {
  code: number | null;
  output: string;
}

/** Runs promtool with `args`, `input` on its stdin; stdout and stderr together. */
export function promtool(args: string[], input?: string): PromtoolResult {
  const command = findPromtool();
  if (!command) throw new Error('promtool is not installed');
  const result = spawnSync(command, args, { input, encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}` };
}
