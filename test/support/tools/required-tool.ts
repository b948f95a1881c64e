/*
 * The one rule for the system tools some suites drive (Chromium, nginx, promtool, and any
 * later one such as haproxy or faketime): the suite never installs them (CI's `.ci/run` does,
 * before the tests). Where a tool is missing, a developer's machine skips the suite and prints
 * why; CI (`CI` set to anything but `false`/`0`) fails instead, so that a machine without the
 * tool cannot turn a suite green by skipping it.
 */

/** True on CI, where a missing tool is a failure rather than a skip. */
export function onCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = env.CI?.trim().toLowerCase();
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0';
}

/**
 * Whether the suite needing `tool` must be skipped: `missing` is why the tool cannot be used
 * here (undefined when it can). Prints the reason when skipping; throws on CI.
 */
export function skipWithoutTool(tool: string, missing: string | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  if (missing === undefined) return false;
  const reason = `${tool} is needed and missing: ${missing}`;
  if (onCi(env)) throw new Error(`${reason} (CI installs it in .ci/run; a CI run without it fails rather than skips)`);
  console.warn(`skipped: ${reason}`);
  return true;
}
