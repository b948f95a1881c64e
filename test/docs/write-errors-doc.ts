import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CATALOGUE, ERROR_CODES, type ErrorScope, type OperationId } from '../../src/error-catalogue.js';
import { OPERATIONS } from '../../src/http/contract/openapi-operations.js';

/*
 * Writes docs/errors.md, the partners' table of error codes, from the error catalogue
 * (src/error-catalogue.ts): `npm run docs:errors`. With --check it writes nothing and exits 1
 * when the file differs; test/docs/errors-doc.test.ts fails the same way.
 */

export const ERRORS_DOC = 'docs/errors.md';

const endpoint = (id: OperationId) => {
  const operation = OPERATIONS.find((o) => o.operationId === id);
  if (!operation) throw new Error(`the error catalogue names an unknown operation: ${id}`);
  return `\`GET ${operation.path}\``;
};

function answeredBy(scope: ErrorScope): string {
  if (scope === 'keyed') return 'every endpoint that needs a key';
  if (scope === 'any') return 'any request';
  if (scope === 'server') return 'the server, before any endpoint (no `X-Request-Id`)';
  if (scope === 'fault') return 'any request';
  return scope.map(endpoint).join(', ');
}

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** The whole of docs/errors.md. */
export function renderErrorsDoc(): string {
  const rows = [...ERROR_CODES]
    .sort((a, b) => ERROR_CATALOGUE[a].status - ERROR_CATALOGUE[b].status)
    .map((code) => {
      const spec = ERROR_CATALOGUE[code];
      return `| ${spec.status} | \`${code}\` | ${cell(answeredBy(spec.from))} | ${cell(spec.when)} |`;
    });
  return [
    '<!-- Generated from src/error-catalogue.ts by `npm run docs:errors`: edit the catalogue, not this file. -->',
    '',
    '# Errors',
    '',
    'Every error is `{ "error": { "code", "message" } }` with `Cache-Control: no-store`; an error about one',
    'parameter adds `"param"`, naming it. `code` is stable, for programs; `message` is one English sentence',
    'saying what to do, and may change. A 503 carries `Retry-After` (seconds): wait that long before retrying.',
    '',
    '| Status | `code` | Answered by | When |',
    '|---|---|---|---|',
    ...rows,
    '',
    'The OpenAPI document (`/api/v1/openapi.json`) lists, for each operation, the codes it can answer, with an',
    'example of each.',
    '',
  ].join('\n');
}

/** The folder holding package.json, above this file wherever it runs from (source or dist/). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('no package.json above test/docs/write-errors-doc');
    dir = up;
  }
  return dir;
}

function main(check: boolean): number {
  const path = join(packageRoot(), ERRORS_DOC);
  const current = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const wanted = renderErrorsDoc();
  if (check) {
    if (current === wanted) return 0;
    console.error(`${ERRORS_DOC} is stale: run npm run docs:errors`);
    return 1;
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, wanted);
  console.log(`wrote ${ERRORS_DOC}`);
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.includes('--check'));
