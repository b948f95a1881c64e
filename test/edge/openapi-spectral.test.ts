import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey, startApi, type TestApi } from '../support/api.js';
import { rawArticle, rawSection } from '../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../support/snapshot-fixture.js';
import { REPO_ROOT } from '../support/worker.js';

/*
 * The served OpenAPI document against Spectral, the linter partners' API gateways and tooling
 * run: the `spectral:oas` ruleset finds no error (nor the missing `info.contact` warning); the
 * OWASP ruleset's real findings are fixed (a 500 on every operation, a maxLength on every string
 * a partner sends); the rest is recorded in docs/decisions/0058-openapi-against-spectral.md. And
 * the live 401 carries the challenge the document names.
 */

const SPECTRAL = join(REPO_ROOT, 'node_modules', '.bin', 'spectral');
const run = promisify(execFile);

interface Finding {
  code: string;
  path: string[];
  severity: number;
  message: string;
}

const dir = tempDir('spectral-');
const dbPath = dir.path('snapshot.db');
let api: TestApi;
let documentPath: string;

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber' })],
    articles: [rawArticle({ slug: 'hello', section_slug: 'fiber', published_at: '2026-01-01T00:00:00Z' })],
  });
  api = await startApi({ databasePath: dbPath });
  documentPath = dir.path('openapi.json');
  writeFileSync(documentPath, (await api.request.get('/api/v1/openapi.json')).text);
});
afterAll(async () => {
  await api?.close();
  dir.cleanup();
});

async function lint(ruleset: string): Promise<Finding[]> {
  const rules = dir.path(`${ruleset.replace(/\W/g, '_').slice(-40)}.yaml`);
  writeFileSync(rules, `extends:\n  - "${ruleset}"\n`);
  // Exit code 1 when there are errors: the findings are on stdout either way.
  const { stdout } = await run(SPECTRAL, ['lint', '--quiet', '--format', 'json', '--fail-severity', 'hint', '-r', rules, documentPath], {
    cwd: REPO_ROOT,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: { stdout?: string; stderr?: string }) => {
    if (!error.stdout) throw new Error(`spectral failed: ${error.stderr}`);
    return { stdout: error.stdout };
  });
  return JSON.parse(stdout) as Finding[];
}

describe('the served OpenAPI document against Spectral', () => {
  it('passes spectral:oas with no error and no warning', async () => {
    const findings = await lint('spectral:oas');
    expect(findings.map((f) => `${f.code} ${f.path.join('.')}: ${f.message}`)).toEqual([]);
  }, 120_000);

  it("leaves none of the OWASP ruleset's real findings: a 500 everywhere, a maxLength on every string a partner sends", async () => {
    // By its file: Spectral resolves a package name from the ruleset file's folder (a temp dir).
    const findings = await lint(join(REPO_ROOT, 'node_modules', '@stoplight', 'spectral-owasp-ruleset', 'dist', 'ruleset.js'));
    const real = findings.filter(
      (f) =>
        f.code === 'owasp:api8:2023-define-error-responses-500' ||
        // Inputs: query, path and header parameters (response schemas and headers are ours).
        (f.code === 'owasp:api4:2023-string-limit' && f.path.includes('parameters')),
    );
    expect(real.map((f) => `${f.code} ${f.path.join('.')}`)).toEqual([]);
    // The ruleset did run: its known, recorded noise is there.
    expect(findings.some((f) => f.code === 'owasp:api8:2023-define-cors-origin')).toBe(true);
  }, 120_000);
});

describe('401 answers', () => {
  it('carry WWW-Authenticate with the ApiKey scheme the document names, with or without the fast path', async () => {
    const { key } = addKey(dbPath, 'Challenge Partner');
    // Warm the cache, so that the fast path is the one refusing the bad key below.
    expect((await api.request.get('/api/v1/articles').set('X-API-Key', key)).status).toBe(200);
    for (const headers of [{}, { 'X-API-Key': 'lsk_notavalidkeynotavalidkeynotava' }]) {
      const res = await api.request.get('/api/v1/articles').set(headers);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('ApiKey header="X-API-Key"');
    }
    const doc = JSON.parse((await api.request.get('/api/v1/openapi.json')).text) as {
      components: { headers: Record<string, { example: string }>; securitySchemes: Record<string, { name: string }> };
    };
    expect(doc.components.headers.WWWAuthenticate!.example).toBe('ApiKey header="X-API-Key"');
    expect(doc.components.securitySchemes.ApiKey!.name).toBe('X-API-Key');
  });
});
