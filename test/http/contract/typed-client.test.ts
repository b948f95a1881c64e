import { execFile } from 'node:child_process';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../../src/lib/paths.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { CLIENT_SOURCE, MISTAKE_PRELUDE, MISTAKES } from './typed-client-source.js';
import { isoPlus, MINUTE } from '../../support/contract-helpers.js';

/*
 * The integration docs/partners.md recommends, end to end: types generated from the live
 * /api/v1/openapi.json with openapi-typescript, a client written with openapi-fetch
 * type-checked by the TypeScript compiler (any error fails), then run as its own process
 * against the live API.
 */

const NOW = '2026-11-01T12:00:00Z';
const dir = tempDir('typed-client-');
let api: TestApi;
let key: string;

const COMPILER: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  noUncheckedIndexedAccess: true,
  skipLibCheck: true,
  types: ['node'],
};

/** Compiles files of the temp dir in one program and emits them; returns each file's diagnostics. */
function compile(files: string[]): Record<string, string[]> {
  const program = ts.createProgram(files.map((f) => dir.path(f)), { ...COMPILER, outDir: dir.dir });
  const out: Record<string, string[]> = {};
  for (const file of files) {
    const source = program.getSourceFile(dir.path(file));
    expect(source, file).toBeDefined();
    out[file] = ts.getPreEmitDiagnostics(program, source).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  }
  expect(program.emit().emitSkipped).toBe(false);
  return out;
}

beforeAll(async () => {
  const dbPath = dir.path('snapshot.db');
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber', name: 'Fiber' })],
    articles: Array.from({ length: 3 }, (_, i) =>
      rawArticle({ slug: `laser-${i}`, title: `Laser story ${i}`, section_slug: 'fiber', published_at: isoPlus(NOW, -(i + 1) * MINUTE) }),
    ),
  });
  key = addKey(dbPath).key;
  api = await startApi({ databasePath: dbPath, clock: testClock(NOW) });

  // The generated client lives in its own folder, resolving packages from this project's.
  symlinkSync(join(projectRoot(), 'node_modules'), dir.path('node_modules'), 'dir');
  writeFileSync(dir.path('package.json'), JSON.stringify({ type: 'module' }));
  const document = (await (await fetch(`${api.url}/api/v1/openapi.json`)).json()) as OpenAPI3;
  writeFileSync(dir.path('schema.d.ts'), astToString(await openapiTS(document)));
}, 120_000);

afterAll(async () => {
  await api.close();
  dir.cleanup();
});

describe('a typed client generated from /api/v1/openapi.json', () => {
  it('names operations by operationId and types their query, header and path parameters', () => {
    const schema = readFileSync(dir.path('schema.d.ts'), 'utf8');
    for (const id of ['listArticles', 'getArticle', 'listCategories', 'searchArticles', 'listChanges', 'getHealth', 'getOpenApi']) {
      expect(schema).toMatch(new RegExp(`\\b${id}: \\{`));
    }
    expect(schema).toContain('"If-None-Match"?:');
  });

  it('compiles a client written with openapi-fetch, and refuses each typical mistake', () => {
    writeFileSync(dir.path('client.ts'), CLIENT_SOURCE);
    // The partners' guide's example too (docs/partners.md), so what partners are shown compiles against the real types.
    const guide = readFileSync(join(projectRoot(), 'docs', 'partners.md'), 'utf8');
    const example = /## Integrating[\s\S]*?```ts\n([\s\S]*?)```/.exec(guide)?.[1];
    expect(example).toContain("createClient<paths>");
    writeFileSync(dir.path('readme-client.ts'), example!.replace("'./syndication.js'", "'./schema.js'"));
    const mistakes = MISTAKES.map((mistake, i) => {
      writeFileSync(dir.path(`mistake-${i}.ts`), `${MISTAKE_PRELUDE}\n${mistake}\n`);
      return [`mistake-${i}.ts`, mistake] as const;
    });
    const diagnostics = compile(['client.ts', 'readme-client.ts', ...mistakes.map(([file]) => file)]);
    expect(diagnostics['client.ts']).toEqual([]);
    expect(diagnostics['readme-client.ts']).toEqual([]);
    for (const [file, mistake] of mistakes) expect(diagnostics[file], mistake).not.toEqual([]);
  }, 120_000);

  it('runs against the live API: list, detail then 304, search, and an error with its code', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [dir.path('client.js'), api.url, key], { cwd: dir.dir, timeout: 60_000 });
    const out = JSON.parse(stdout);
    expect(out.list).toMatchObject({ status: 200, slugs: ['laser-0', 'laser-1'], pages: 2 });
    expect(out.list.link).toContain('rel="next"');
    expect(out.detail).toMatchObject({ status: 200, slug: 'laser-0' });
    expect(out.detail.bodyLength).toBeGreaterThan(0);
    expect(out.detail.etag).toMatch(/^"[^"]+"$/);
    // openapi-fetch sends through fetch, which adds Cache-Control: no-cache: still a 304.
    expect(out.again).toEqual({ status: 304, data: null });
    expect(out.search).toMatchObject({ status: 200, q: 'laser', total: 3, words: ['laser'], plain: false });
    expect(out.search.marked.map((w: string) => w.toLowerCase())).toContain('laser');
    expect(typeof out.search.bodyHtml).toBe('string');
    expect(out.missing).toEqual({ status: 404, code: 'not_found' });
  }, 60_000);
});
