import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERRORS_DOC, renderErrorsDoc } from './write-errors-doc.js';
import { ERROR_CATALOGUE, ERROR_CODES } from '../../src/error-catalogue.js';

const committed = () => readFileSync(fileURLToPath(new URL(`../../${ERRORS_DOC}`, import.meta.url)), 'utf8');

describe('docs/errors.md', () => {
  it('is what the error catalogue generates (run npm run docs:errors after changing the catalogue)', () => {
    expect(committed()).toBe(renderErrorsDoc());
  });

  it('has one row per code, with its status', () => {
    const rows = committed()
      .split('\n')
      .filter((line) => /^\| \d{3} \|/.test(line))
      .map((line) => line.split(' | '));
    expect(rows.map((cells) => cells[1]).sort()).toEqual(ERROR_CODES.map((code) => `\`${code}\``).sort());
    for (const cells of rows) {
      const code = cells[1]!.replaceAll('`', '') as keyof typeof ERROR_CATALOGUE;
      expect(cells[0], code).toBe(`| ${ERROR_CATALOGUE[code].status}`);
    }
  });
});
