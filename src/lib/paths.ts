import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/**
 * The repository root, found from this file's location, so that the same code finds
 * `src/db/snapshot/migrations` and `data/` whether it runs from `src/` (tests) or `dist/src/` (built).
 */
export function projectRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) || dir.endsWith(`${'/'}dist`)) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  root = resolve(dir);
  return root;
}
