import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/worker.js';

/*
 * Every code path the README, the guides in docs/ and the comments of the code name exists
 * (src/..., sync/..., test/..., docs/..., .ci/..., scripts/...), and every `npm run <script>`
 * they tell a reader to run is a script of package.json: a reader following them on a fresh
 * clone never meets a file or a command that is not there. CHANGELOG.md is left out: it
 * records what was true of each version, and may name what a later version removed.
 * (docs-links.test.ts beside this checks the links between the pages.)
 */

function filesUnder(folder: string, keep: (path: string) => boolean): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'dist' ? [] : filesUnder(path, keep);
    return keep(path) ? [path] : [];
  });
}

const docs = [join(REPO_ROOT, 'README.md'), ...filesUnder(join(REPO_ROOT, 'docs'), (p) => p.endsWith('.md'))];
const code = [
  ...['src', 'sync', 'test', 'docs/examples'].flatMap((folder) => filesUnder(join(REPO_ROOT, folder), (p) => /\.(ts|mjs)$/.test(p))),
  ...filesUnder(join(REPO_ROOT, '.ci'), () => true),
  join(REPO_ROOT, '.env.example'),
].filter((file) => !file.endsWith('code-paths.test.ts')); // this file names its exceptions below

// A path starts one of these folders, not inside a longer path, a URL or a shell variable
// (`dist/src/...` is the build of `src/...` and is checked as such).
const PATH = /(?<![\w.\/$-])(?:src|sync|test|docs|\.ci|scripts)\/[\w.\/-]*[\w\/]/g;

// Named on purpose although absent, with the reason.
const NOT_OURS: Record<string, string> = {
  // The partner's own project, where openapi-typescript writes the generated types.
  'docs/partners.md: src/syndication.d.ts': 'a path in the partner project',
};

/** The file a named path stands for: as written, a module named without its extension, or a built .js. */
function exists(path: string): boolean {
  const candidates = [path, `${path}.ts`, `${path}.test.ts`, path.replace(/\.js$/, '.ts'), path.replace(/\.js$/, '.mjs')];
  return candidates.some((candidate) => existsSync(join(REPO_ROOT, candidate)));
}

describe('the code paths the documentation and the comments name', () => {
  it('all exist', () => {
    const missing: string[] = [];
    let named = 0;
    for (const file of [...docs, ...code]) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(PATH)) {
        const next = text[match.index + match[0].length];
        if (next === '*' || next === '<' || next === '{') continue; // a pattern, not a path
        named += 1;
        const where = `${relative(REPO_ROOT, file)}: ${match[0]}`;
        if (!exists(match[0]) && !(where in NOT_OURS)) missing.push(where);
      }
    }
    expect(named).toBeGreaterThan(200);
    expect(missing).toEqual([]);
  });

  it('include only npm scripts that package.json has', () => {
    const scripts = Object.keys((JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);
    const unknown: string[] = [];
    let commands = 0;
    for (const file of docs) {
      for (const [, script] of readFileSync(file, 'utf8').matchAll(/\bnpm run(?: -s)? ([a-z][\w:-]*\w)/g)) {
        commands += 1;
        if (!scripts.includes(script!)) unknown.push(`${relative(REPO_ROOT, file)}: npm run ${script}`);
      }
    }
    expect(commands).toBeGreaterThan(20);
    expect(unknown).toEqual([]);
  });

  it('name, as `node dist/...`, only files the build makes from a source', () => {
    const missing: string[] = [];
    for (const file of [...docs, ...code]) {
      for (const [, built] of readFileSync(file, 'utf8').matchAll(/\bnode (?:--[\w=-]+ )*dist\/([\w.\/-]+)\.js\b/g)) {
        if (!existsSync(join(REPO_ROOT, `${built}.ts`))) missing.push(`${relative(REPO_ROOT, file)}: dist/${built}.js`);
      }
    }
    expect(missing).toEqual([]);
  });
});
