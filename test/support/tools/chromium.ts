import { existsSync } from 'node:fs';
import { chromium, type BrowserContext } from 'playwright-core';

/*
 * Debian's Chromium, driven by playwright-core (nothing here downloads a browser), for the
 * suites that load our pages or our HTML in a real browser. The flags keep it off the network:
 * without the background-networking ones it tries hosts this machine cannot reach.
 */

export const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Why Chromium cannot be used here (undefined when it can); .ci/run installs it. */
export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `${CHROMIUM} not found (Debian's chromium package)`;
}

/** A headless Chromium with a fresh profile in `profileDir`. */
export function launchChromium(profileDir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, args: ARGS });
}
