import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const dist = (path: string) => fileURLToPath(new URL(`../../dist/${path}`, import.meta.url));

/*
 * Node 24's ES module loader parses a package's whole "exports" map again for every file it
 * loads from that package, and drizzle-orm's is 178 KB: imported, drizzle cost the API, the
 * worker and the CLI about a second and 150 MB of garbage at each start. So its CommonJS
 * build is loaded, through src/db/sqlite/drizzle.ts. This loads each process's modules in a
 * child with a load hook and lists the drizzle-orm files loaded as ES modules.
 */
const LOADER = `
import { registerHooks } from 'node:module';
const esm = new Set(), cjs = new Set();
registerHooks({
  load(url, context, nextLoad) {
    const result = nextLoad(url, context);
    // The migrator is imported (src/db/sqlite/migrate.ts): one file, shared with the search threads.
    if (url.includes('/node_modules/drizzle-orm/') && !url.endsWith('/drizzle-orm/migrator.js')) (result.format === 'module' ? esm : cjs).add(url);
    return result;
  },
});
for (const path of process.argv.slice(1)) await import(path);
console.log(JSON.stringify({ esm: [...esm], cjs: cjs.size }));
`;

describe('module loading', () => {
  it('loads drizzle-orm through its CommonJS build in the API, the worker and the CLI modules, never as ES modules', () => {
    const modules = [
      'src/api-process.js',
      'src/app.js',
      'sync/run-sync.js',
      'sync/reindex.js',
      'src/cli/keys-failure.js',
      'src/db/keys/keys.js',
      'src/db/sqlite/migrate.js',
    ].map(dist);
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', LOADER, ...modules], { encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    const loaded = JSON.parse(run.stdout) as { esm: string[]; cjs: number };
    expect(loaded.esm).toEqual([]);
    // The hook did see drizzle: the modules above use it.
    expect(loaded.cjs).toBeGreaterThan(10);
  });
});
