import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, OPERATION_IDS, type ErrorCode } from '../../src/error-catalogue.js';
import { AppError, InvalidParameterError, SearchBusyError } from '../../src/errors.js';
import { OPERATIONS } from '../../src/http/contract/openapi-operations.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/*
 * Every place the source raises or answers an error code, as written: an error constructed or
 * a super() call with a code, the server's own refusals (status and code side by side) and the
 * code the error handler records. The compiler already refuses a code outside the catalogue;
 * this reads the text too, so a code passed around as a plain string is caught as well.
 */
const RAISES: RegExp[] = [
  // Only these two take a code first; the other classes fix theirs in a super() call.
  /new (?:AppError|ApiKeyError)\(\s*'(?<code>[a-z][a-z_]*)'/g,
  /super\(\s*'(?<code>[a-z][a-z_]*)'/g,
  /(?:sendJsonError|writeRaw)\(\w+, (?<status>\d{3}), '(?<code>[a-z][a-z_]*)'/g,
  /\{ status: (?<status>\d{3}), code: '(?<code>[a-z][a-z_]*)'/g,
  /errorCode = '(?<code>[a-z][a-z_]*)'/g,
];

function raisedCodes(): { code: string; status: number | undefined; where: string }[] {
  const found: { code: string; status: number | undefined; where: string }[] = [];
  for (const file of sourceFiles(SRC)) {
    if (file.endsWith('error-catalogue.ts')) continue;
    const text = readFileSync(file, 'utf8');
    for (const pattern of RAISES) {
      for (const m of text.matchAll(pattern)) {
        const status = m.groups!.status === undefined ? undefined : Number(m.groups!.status);
        found.push({ code: m.groups!.code!, status, where: file.slice(SRC.length) });
      }
    }
  }
  return found;
}

describe('the error catalogue', () => {
  const raised = raisedCodes();

  it('holds every code the source raises, with the status it is raised with', () => {
    expect(raised.length).toBeGreaterThan(10);
    for (const { code, status, where } of raised) {
      expect(Object.keys(ERROR_CATALOGUE), `${where} raises ${code}`).toContain(code);
      if (status !== undefined) expect(status, `${where} answers ${code}`).toBe(ERROR_CATALOGUE[code as ErrorCode].status);
    }
  });

  it('holds no code that nothing raises', () => {
    const codes = new Set(raised.map((r) => r.code));
    for (const code of Object.keys(ERROR_CATALOGUE)) expect(codes, code).toContain(code);
  });

  it('names exactly the operations of the OpenAPI document', () => {
    expect(OPERATIONS.map((o) => o.operationId).sort()).toEqual([...OPERATION_IDS].sort());
  });

  it('gives errors their status', () => {
    expect(new InvalidParameterError('limit', 'no').status).toBe(400);
    expect(new SearchBusyError('busy', 1).status).toBe(503);
    expect(new AppError('internal_error', 'oops').status).toBe(500);
  });
});
