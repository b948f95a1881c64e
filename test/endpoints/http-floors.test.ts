import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/paths.js';

/*
 * src/http reads by role (issue 33): its folders are floors, and no import runs back up one.
 * The order, lowest first; a file directly in src/http (warm.ts) is the top floor.
 */
const FLOORS = ['server', 'endpoints', 'pipeline', 'cache', 'contract', 'fast', 'routes', '.'];

const HTTP = join(projectRoot(), 'src', 'http');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The floor of a file under src/http: its first folder, or '.' for a file at the top. */
function floorOf(path: string): string {
  const parts = relative(HTTP, path).split(/[\\/]/);
  return parts.length === 1 ? '.' : parts[0]!;
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)[^'"]*?from\s+'(\.[^']+)'/gm)) found.push(m[1]!);
  return found.map((spec) => resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
}

describe('the floors of src/http', () => {
  it('every folder is on a floor', () => {
    const folders = new Set(sources(HTTP).map(floorOf));
    for (const folder of folders) expect(FLOORS, folder).toContain(folder);
  });

  it('no import runs back up a floor', () => {
    const upward: string[] = [];
    for (const file of sources(HTTP)) {
      const from = FLOORS.indexOf(floorOf(file));
      for (const target of importsOf(file)) {
        if (!target.startsWith(HTTP)) continue;
        const to = FLOORS.indexOf(floorOf(target));
        if (to > from) upward.push(`${relative(HTTP, file)} -> ${relative(HTTP, target)}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('the fast path room holds only the fast path', () => {
    expect(readdirSync(join(HTTP, 'fast')).sort()).toEqual(['fast-path.ts', 'turn-ends.ts']);
  });
});
