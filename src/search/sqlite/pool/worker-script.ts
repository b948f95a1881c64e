import { existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { projectRoot } from '../../../lib/paths.js';

/**
 * The search thread's script. A Worker needs JavaScript: from the build (dist/, as `npm start`
 * runs) it is worker.js beside this file. Under vitest this file runs as TypeScript from src/,
 * where no worker.js exists, so the built copy in dist/ is used: `npm test` builds first (run
 * `npm run build` before running single test files after changing the search code).
 */
export function workerScript(): URL {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.js')) return new URL('./worker.js', import.meta.url);
  const root = projectRoot();
  const built = join(root, 'dist', relative(root, dirname(here)), 'worker.js');
  if (!existsSync(built)) throw new Error(`the search worker is not built (${relative(root, built)} is missing): run npm run build`);
  return pathToFileURL(built);
}
