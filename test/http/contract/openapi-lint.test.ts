import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApi } from '../../support/api.js';
import { useOneArticleApi } from './one-article-api.js';

/*
 * The live OpenAPI document against a standard linter (Redocly CLI, recommended rules, a
 * devDependency that installs as one package with no install script) and against the live
 * API's own answers where the two used to disagree.
 */

const fixture = useOneArticleApi('openapi-lint-');
const dir = fixture.dir;
let api: TestApi;
let key: string;
type Json = Record<string, any>;
let doc: Json;

beforeAll(async () => {
  ({ api, key } = fixture);
  doc = (await (await fetch(`${api.url}/api/v1/openapi.json`)).json()) as Json;
});

const REDOCLY = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

describe('the live OpenAPI document', () => {
  it("passes Redocly CLI's recommended rules with no error and no warning", async () => {
    const file = dir.path('openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    // Telemetry and the update check off: the lint reads the file and nothing else.
    const { stdout } = await promisify(execFile)(process.execPath, [REDOCLY, 'lint', file, '--extends=recommended', '--format=json'], {
      env: { PATH: process.env.PATH ?? '', HOME: dir.path('home'), REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      timeout: 90_000,
    }).catch((error: { stdout?: string; stderr?: string }) => {
      // Redocly exits 1 when it finds errors: the report is still on stdout.
      if (error.stdout) return { stdout: error.stdout };
      throw new Error(`redocly did not run: ${error.stderr ?? String(error)}`);
    });
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: Array<{ ruleId: string; message: string }> };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 120_000);

  it("gives each operation's invalid_parameter and invalid_cursor examples the live API's own messages", async () => {
    const example = (path: string, code: string) => doc.paths[path].get.responses['400'].content['application/json'].examples[code].value;
    const live = async (path: string) => (await (await fetch(`${api.url}${path}`, { headers: { 'X-API-Key': key } })).json()) as Json;
    // The feed takes 1 to 100 per page, the list 1 to 50: each example says its own.
    expect(example('/api/v1/changes', 'invalid_parameter')).toEqual(await live('/api/v1/changes?limit=0'));
    expect(example('/api/v1/changes', 'invalid_parameter').error.message).toContain('1 to 100');
    expect(example('/api/v1/articles', 'invalid_parameter')).toEqual(await live('/api/v1/articles?limit=0'));
    expect(example('/api/v1/categories', 'invalid_parameter')).toEqual(await live('/api/v1/categories?locale=fr'));
    // Every cause of invalid_cursor the live message names is in the documented one.
    const cursor = await live('/api/v1/changes?since=c_not_a_cursor');
    expect(cursor.error.code).toBe('invalid_cursor');
    expect(example('/api/v1/changes', 'invalid_cursor')).toEqual(cursor);
    const when = doc.paths['/api/v1/changes'].get.responses['400'].description as string;
    for (const cause of ['malformed', 'another snapshot', 'older than the retained history', 'future']) expect(when).toContain(cause);
  });

  it('gives response fields their real bounds, never the ±(2^53 - 1) of any integer', () => {
    expect(JSON.stringify(doc.components.schemas)).not.toContain(String(Number.MAX_SAFE_INTEGER));
    expect(doc.components.schemas.ChangeList.properties.meta.properties.limit).toEqual({ type: 'integer', minimum: 1, maximum: 100 });
    expect(doc.components.schemas.ArticleList.properties.meta.properties.limit).toEqual({ type: 'integer', minimum: 1, maximum: 50 });
  });

  it('pre-fills nothing in "Try it out" that would narrow the answer: examples only on required parameters', () => {
    const parameters = Object.values(doc.paths as Json).flatMap((item: Json) =>
      (item.get.parameters as Json[]).map((p) => (p.$ref ? doc.components.parameters[String(p.$ref).split('/').at(-1)!] : p)),
    );
    const prefilled = parameters.filter((p) => p.example !== undefined || p.examples !== undefined || p.schema?.examples !== undefined);
    expect(prefilled.map((p) => p.name).sort()).toEqual(['q', 'slug']);
    for (const p of prefilled) expect(p.required, p.name).toBe(true);
  });
});
