import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/worker.js';

/*
 * The Procfile is what production runs, `npm start` / `npm run sync` what the README and the
 * bench run: they must start the same node command. The V8 flag bounds the young generation of
 * the API's and the worker's main isolates (Node 24 lets it grow to 192 MB on a large machine,
 * which was most of the API's RSS: docs/operations.md, "Memory"); the search threads get the
 * same bound from src/search/sqlite/pool/worker-pool.ts whatever the command.
 */

const procfile = Object.fromEntries(
  readFileSync(join(REPO_ROOT, 'Procfile'), 'utf8')
    .split('\n')
    .filter((line) => line.includes(':'))
    .map((line) => [line.slice(0, line.indexOf(':')).trim(), line.slice(line.indexOf(':') + 1).trim()]),
);
const scripts = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

describe('the start commands', () => {
  it('npm start runs exactly the Procfile web command, and npm run sync the worker command', () => {
    expect(scripts.start).toBe(`exec ${procfile.web}`);
    expect(scripts.sync).toBe(`exec ${procfile.worker}`);
  });

  it('start the API and the worker with a bounded young generation', () => {
    // The API's old generation grows at most twofold per collection (decision 0076), and V8's
    // memory reducer, whose collections of a heap that looked idle landed in searches, is off
    // (decision 0078).
    expect(procfile.web).toMatch(/^node --max-semi-space-size=16 --heap-growing-percent=100 --no-memory-reducer dist\/\S+\.js$/);
    // The worker's old generation also grows by 15% at most per collection (decisions 0055, 0075).
    expect(procfile.worker).toMatch(/^node --max-semi-space-size=4 --heap-growing-percent=15 dist\/\S+\.js$/);
  });
});
