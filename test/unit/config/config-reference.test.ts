import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MEANINGS, referenceRows, renderConfigReference } from '../../../src/config/reference.js';
import { REPO_ROOT } from '../../support/worker.js';

/*
 * docs/configuration.md is generated from the config schemas (npm run docs:config): these
 * fail when a variable a process reads is missing from it or from .env.example, or when the
 * committed file is not what the schemas give today.
 */

const rows = referenceRows();
const names = rows.map((row) => row.name);
const example = readFileSync(`${REPO_ROOT}.env.example`, 'utf8');

describe('the configuration reference', () => {
  it('gives a meaning to every variable a process reads, and to none that no process reads', () => {
    expect(names.length).toBeGreaterThan(40);
    expect(names.filter((name) => !(name in MEANINGS)), 'variables without a meaning in src/config/reference.ts').toEqual([]);
    expect(Object.keys(MEANINGS).filter((name) => !names.includes(name)), 'meanings of variables no schema reads').toEqual([]);
  });

  it('says what applies when unset only for variables whose schema has no default', () => {
    const both = rows.filter((row) => row.defaults.some((d) => d !== undefined) && MEANINGS[row.name]?.unset !== undefined);
    expect(both.map((row) => row.name), 'the schema default is the one shown: drop `unset` there').toEqual([]);
  });

  it('is committed as generated: docs/configuration.md is up to date (npm run docs:config)', () => {
    const committed = readFileSync(`${REPO_ROOT}docs/configuration.md`, 'utf8');
    expect(committed, 'docs/configuration.md is stale: run npm run docs:config').toBe(renderConfigReference());
    for (const name of names) expect(committed, name).toContain(`| \`${name}\` |`);
  });
});

describe('.env.example', () => {
  const listed = [...example.matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!);

  it('lists every variable a process reads, and only those', () => {
    expect(names.filter((name) => !listed.includes(name)), 'missing from .env.example').toEqual([]);
    expect(listed.filter((name) => !names.includes(name)), 'in .env.example but read by no process').toEqual([]);
  });

  it('gives each variable it sets the default its schema has', () => {
    for (const [, name, raw] of example.matchAll(/^([A-Z][A-Z0-9_]+)=(.*)$/gm)) {
      const value = raw!.replace(/^"(.*)"$/, '$1');
      const row = rows.find((r) => r.name === name)!;
      const defaults = new Set(row.defaults.filter((d) => d !== undefined));
      // Empty: "unset"; a variable whose default differs per process is left empty there.
      if (value === '' || defaults.size !== 1) continue;
      // SNAPSHOT_MAX_AGE is written as the operator would (30m); its schema holds seconds.
      if (name === 'SNAPSHOT_MAX_AGE') expect(value).toBe('30m');
      else expect(value, name).toBe([...defaults][0]);
    }
  });
});
