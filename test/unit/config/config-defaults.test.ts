import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defaultAppSettings, loadApiConfig } from '../../../src/config/api.js';

const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path.endsWith('/config') ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('defaults of settings', () => {
  it('are written only in src/config: nothing else falls back from a dependency or a config value to a literal', () => {
    // e.g. `deps.responseCacheBytes ?? 64 * 1024 * 1024`, once beside a config default of 48 MB.
    const fallback = /\b(?:deps|config|settings)\??\.\w+ \?\? (?:-?[0-9]|true\b|false\b|'|`)/g;
    const found = sourceFiles(SRC).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(fallback)].map((m) => `${file.slice(SRC.length)}: ${m[0]}`),
    );
    expect(found).toEqual([]);
  });

  it("give the app the configuration's values when no variable is set", () => {
    const config = loadApiConfig({});
    expect(defaultAppSettings()).toEqual({
      responseCacheBytes: config.responseCacheBytes,
      publicBaseUrl: config.publicBaseUrl,
      rateLimit: config.rateLimit,
      processes: config.processes,
      snapshotMaxAgeSeconds: config.snapshotMaxAgeSeconds,
      trustProxy: config.trustProxy,
    });
    // The response cache's share (three quarters) of the default 32 MB budget.
    expect(defaultAppSettings().responseCacheBytes).toBe(24 * 1024 * 1024);
  });
});
