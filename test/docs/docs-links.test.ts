import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/worker.js';

/*
 * Every reference resolves: the links between README.md and docs/ (file and heading), and the
 * docs/... paths that comments in src/, sync/, test/ and .env.example cite.
 */

function filesUnder(folder: string, keep: (path: string) => boolean): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'dist' ? [] : filesUnder(path, keep);
    return keep(path) ? [path] : [];
  });
}

// GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens.
function anchorsOf(markdown: string): Set<string> {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '');
  return new Set(
    [...withoutCode.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

const docs = [join(REPO_ROOT, 'README.md'), join(REPO_ROOT, 'CHANGELOG.md'), ...filesUnder(join(REPO_ROOT, 'docs'), (p) => p.endsWith('.md') && !p.includes('_incoming'))];

describe('the documentation', () => {
  it('has every link between its pages resolve to a file and, with #, to a heading of it', () => {
    const broken: string[] = [];
    let links = 0;
    for (const file of docs) {
      const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target!)) continue;
        links += 1;
        const [path, anchor] = target!.split('#') as [string, string | undefined];
        const resolved = path === '' ? file : resolve(dirname(file), path);
        const where = `${relative(REPO_ROOT, file)} -> ${target}`;
        let isFile = false;
        try {
          isFile = statSync(resolved).isFile();
          if (!isFile) statSync(resolved);
        } catch {
          broken.push(`${where} (no such file)`);
          continue;
        }
        if (anchor !== undefined && (!isFile || !anchorsOf(readFileSync(resolved, 'utf8')).has(anchor))) broken.push(`${where} (no such heading)`);
      }
    }
    expect(links).toBeGreaterThan(50);
    expect(broken).toEqual([]);
  });

  it('exists at every docs/ path that code comments and .env.example cite', () => {
    const sources = [
      ...['src', 'sync', 'test'].flatMap((folder) => filesUnder(join(REPO_ROOT, folder), (p) => p.endsWith('.ts'))),
      join(REPO_ROOT, '.env.example'),
    ];
    const missing: string[] = [];
    let cited = 0;
    for (const file of sources) {
      for (const [path] of readFileSync(file, 'utf8').matchAll(/\bdocs\/[A-Za-z0-9_./-]+\.md\b/g)) {
        cited += 1;
        try {
          statSync(join(REPO_ROOT, path));
        } catch {
          missing.push(`${relative(REPO_ROOT, file)}: ${path}`);
        }
      }
    }
    expect(cited).toBeGreaterThan(5);
    expect(missing).toEqual([]);
  });

  it('cites no spec by a bare file name outside docs/specs/', () => {
    const sources = ['src', 'sync', 'test'].flatMap((folder) => filesUnder(join(REPO_ROOT, folder), (p) => p.endsWith('.ts')));
    const bare = sources.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/(?<![\w/])(?:[\w./-]*\/)?(partner-api|api-contract|cms-contract)\.md/g)]
        // docs/specs/<name>.md from code; specs/<name>.md in a meaning written relative to docs/ (src/config/reference.ts).
        .filter((m) => !/^(docs\/)?specs\/[\w-]+\.md$/.test(m[0]))
        .map((m) => `${relative(REPO_ROOT, file)}: ${m[0]}`),
    );
    expect(bare).toEqual([]);
  });
});
