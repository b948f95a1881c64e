import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadApiConfig } from '../../../src/config/api.js';
import { buildOpenApiDocument } from '../../../src/http/contract/openapi.js';
import * as responseSchemas from '../../../src/http/contract/response-schemas.js';
import { errorSchema } from '../../../src/http/contract/response-schemas.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { deepStrict, isoPlus, MINUTE } from '../../support/contract-helpers.js';

/*
 * The OpenAPI document is complete: valid OpenAPI 3.1 by a real validator, stable operation
 * ids and tags, servers from the configuration, every response header, conditional
 * parameters and 304s, an example for every response, and each operation's error codes; and
 * what it documents is what the live API sends.
 */

const NOW = '2026-11-01T12:00:00Z';
const dir = tempDir();
const dbPath = dir.path('snapshot.db');
let api: TestApi;
let key: string;
type Json = Record<string, any>;
let doc: Json;

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [rawSection({ slug: 'fiber', name: 'Fiber' })],
    articles: Array.from({ length: 5 }, (_, i) =>
      rawArticle({ slug: `story-${i}`, title: `Laser story ${i}`, section_slug: 'fiber', published_at: isoPlus(NOW, -(i + 1) * MINUTE) }),
    ),
  });
  key = addKey(dbPath).key;
  api = await startApi({
    databasePath: dbPath,
    clock: testClock(NOW),
    publicBaseUrl: 'https://api.example.com',
    // A rate, so that the RateLimit fields the document promises are sent.
    rateLimit: { perMinute: 60_000, burstSeconds: 10 },
  });
  doc = (await api.request.get('/api/v1/openapi.json')).body as Json;
});

afterAll(async () => {
  await api.close();
  dir.cleanup();
});

const OPERATION_IDS = {
  '/api/v1/articles': 'listArticles',
  '/api/v1/articles/{slug}': 'getArticle',
  '/api/v1/categories': 'listCategories',
  '/api/v1/search': 'searchArticles',
  '/api/v1/changes': 'listChanges',
  '/health': 'getHealth',
  '/api/v1/openapi.json': 'getOpenApi',
} as const;

/** A request of each operation that succeeds, and one that fails with each status it can show live. */
const SAMPLES: Record<string, { ok: string; keyed: boolean; failures?: Record<string, [string, string]> }> = {
  listArticles: { ok: '/api/v1/articles?limit=2&page=2', keyed: true, failures: { '400': ['/api/v1/articles?limit=0', 'invalid_parameter'] } },
  getArticle: {
    ok: '/api/v1/articles/story-1',
    keyed: true,
    failures: { '404': ['/api/v1/articles/nope', 'not_found'], '400': ['/api/v1/articles/story-1?locale=fr', 'invalid_parameter'] },
  },
  listCategories: { ok: '/api/v1/categories', keyed: true, failures: { '400': ['/api/v1/categories?locale=de', 'invalid_parameter'] } },
  searchArticles: { ok: '/api/v1/search?q=laser&limit=2', keyed: true, failures: { '400': ['/api/v1/search?q=a', 'invalid_parameter'] } },
  listChanges: {
    ok: '/api/v1/changes?limit=2',
    keyed: true,
    failures: { '400': ['/api/v1/changes?since=not-a-cursor', 'invalid_cursor'] },
  },
  getHealth: { ok: '/health', keyed: false },
  getOpenApi: { ok: '/api/v1/openapi.json', keyed: false },
};

const operations = () =>
  Object.entries(doc.paths as Json).map(([path, item]) => ({ path, op: (item as Json).get as Json }));

/** A documented header, its `$ref` resolved. */
const headerNames = (response: Json) => Object.keys(response.headers ?? {}).map((n) => n.toLowerCase());

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document for @seriousme/openapi-schema-validator, which rejects a broken one', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    const broken = structuredClone(doc);
    broken.paths['/api/v1/articles'].get.parameters[0].in = 'body';
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('names every operation with its stable operationId and a declared tag', () => {
    expect(Object.fromEntries(operations().map(({ path, op }) => [path, op.operationId]))).toEqual(OPERATION_IDS);
    const declared = (doc.tags as Json[]).map((t) => t.name);
    for (const { path, op } of operations()) {
      expect(op.tags, path).toHaveLength(1);
      expect(declared, path).toContain(op.tags[0]);
      expect(op.summary, path).toEqual(expect.any(String));
    }
  });

  it('takes its server address from PUBLIC_BASE_URL, relative "/" by default', () => {
    expect(doc.servers).toEqual([{ url: 'https://api.example.com', description: expect.any(String) }]);
    expect(buildOpenApiDocument().servers).toEqual([{ url: '/', description: expect.any(String) }]);
    expect(loadApiConfig({}).publicBaseUrl).toBe('/');
    expect(loadApiConfig({ PUBLIC_BASE_URL: 'https://api.example.com/' }).publicBaseUrl).toBe('https://api.example.com');
    expect(loadApiConfig({ PUBLIC_BASE_URL: '/syndication' }).publicBaseUrl).toBe('/syndication');
    expect(() => loadApiConfig({ PUBLIC_BASE_URL: 'ftp://x' })).toThrow(/PUBLIC_BASE_URL/);
    // A query or fragment would end up in the middle of every documented address.
    for (const v of ['https://a.com/x?y=1', 'https://a.com/#top', '/syndication?x=1']) {
      expect(() => loadApiConfig({ PUBLIC_BASE_URL: v }), v).toThrow(/without \? or #/);
    }
    // A host without a scheme: the message names both forms, not a regular expression.
    expect(() => loadApiConfig({ PUBLIC_BASE_URL: 'api.example.com' })).toThrow(
      'PUBLIC_BASE_URL must be an http:// or https:// address (https://api.example.com) or a path starting with / (/syndication), without ? or #',
    );
  });

  it('documents If-None-Match, If-Modified-Since and a 304 with the validators on every cached operation', () => {
    for (const { path, op } of operations()) {
      const cached = path !== '/health';
      const refs = (op.parameters as Json[]).map((p) => p.$ref).filter(Boolean);
      if (!cached) {
        expect(op.responses['304'], path).toBeUndefined();
        continue;
      }
      expect(refs, path).toEqual(['#/components/parameters/IfNoneMatch', '#/components/parameters/IfModifiedSince']);
      expect(headerNames(op.responses['304']), path).toEqual(expect.arrayContaining(['etag', 'last-modified', 'cache-control', 'vary']));
    }
    expect(doc.components.parameters.IfNoneMatch).toMatchObject({ name: 'If-None-Match', in: 'header' });
    expect(doc.components.parameters.IfModifiedSince).toMatchObject({ name: 'If-Modified-Since', in: 'header' });
  });

  it('gives an example for every response with a body, valid for its schema', () => {
    let checked = 0;
    for (const { path, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        const media = response.content?.['application/json'];
        if (status === '304') {
          expect(media, `${path} 304`).toBeUndefined();
          continue;
        }
        expect(media, `${path} ${status}`).toBeDefined();
        const examples = media.example !== undefined ? [media.example] : Object.values(media.examples ?? {}).map((e: any) => e.value);
        expect(examples.length, `${path} ${status}`).toBeGreaterThan(0);
        const id = (media.schema.$ref as string | undefined)?.split('/').at(-1);
        for (const example of examples) {
          if (id) deepStrict(schemaById(id)).parse(example);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it("lists each operation's error codes, each under its own status with an example that says so", () => {
    const codesOf = (op: Json, status: string) =>
      Object.values(op.responses[status]?.content?.['application/json'].examples ?? {}).map((e: any) => e.value.error.code);
    const keyCodes = ['missing_api_key', 'invalid_api_key', 'revoked_api_key', 'expired_api_key'];
    for (const { path, op } of operations()) {
      const keyed = SAMPLES[op.operationId]!.keyed;
      expect(op.security, path).toEqual(keyed ? [{ ApiKey: [] }] : []);
      if (!keyed) continue;
      expect(codesOf(op, '401').sort(), path).toEqual([...keyCodes].sort());
      expect(codesOf(op, '400'), path).toContain('invalid_parameter');
      expect(codesOf(op, '503'), path).toEqual(expect.arrayContaining(['service_unavailable', 'rate_limited']));
      expect(headerNames(op.responses['503']), path).toEqual(expect.arrayContaining(['retry-after', 'cache-control']));
      for (const [status, response] of Object.entries(op.responses as Json)) {
        for (const code of codesOf(op, status)) expect(response.description, `${path} ${status}`).toContain(`\`${code}\``);
        for (const example of Object.values(response.content?.['application/json'].examples ?? {})) {
          deepStrict(errorSchema).parse((example as Json).value);
        }
      }
    }
    const byId = Object.fromEntries(operations().map(({ op }) => [op.operationId, op]));
    expect(codesOf(byId.getArticle!, '404').sort()).toEqual(['article_removed', 'not_found']);
    expect(codesOf(byId.searchArticles!, '503')).toContain('search_busy');
    expect(codesOf(byId.listArticles!, '503')).not.toContain('search_busy');
    expect(byId.listArticles!.responses['404']).toBeUndefined();
  });

  it('documents the RateLimit fields on every answer to a valid key, and not on a 401', () => {
    for (const { op } of operations()) {
      const keyed = SAMPLES[op.operationId]!.keyed;
      for (const [status, response] of Object.entries(op.responses as Json)) {
        const names = headerNames(response);
        const expected = keyed && status !== '401';
        expect(names.includes('ratelimit-policy'), `${op.operationId} ${status}`).toBe(expected);
        expect(names.includes('ratelimit'), `${op.operationId} ${status}`).toBe(expected);
      }
    }
  });

  it('documents the Link header on the two paginated operations only', () => {
    for (const { op } of operations()) {
      const paged = ['listArticles', 'searchArticles'].includes(op.operationId);
      expect(headerNames(op.responses['200']).includes('link'), op.operationId).toBe(paged);
    }
  });
});

/** The zod schema exported by response-schemas.ts under a component's registry id. */
function schemaById(id: string): z.ZodType {
  for (const schema of Object.values(responseSchemas)) {
    if (schema instanceof z.ZodType && z.globalRegistry.get(schema)?.id === id) return schema;
  }
  throw new Error(`no zod schema registered as ${id}`);
}

describe('the live API sends what the document says', () => {
  it('sends every documented header of the 200, the 304 and the errors of each operation', async () => {
    for (const { path, op } of operations()) {
      const sample = SAMPLES[op.operationId]!;
      const get = (url: string) => (sample.keyed ? api.request.get(url).set('X-API-Key', key) : api.request.get(url));
      const ok = await get(sample.ok);
      expect(ok.status, sample.ok).toBe(200);
      for (const name of headerNames(op.responses['200'])) expect(ok.headers, `${path} 200 ${name}`).toHaveProperty(name);
      if (op.responses['304']) {
        const again = await get(sample.ok).set('If-None-Match', ok.headers.etag as string);
        expect(again.status, sample.ok).toBe(304);
        for (const name of headerNames(op.responses['304'])) expect(again.headers, `${path} 304 ${name}`).toHaveProperty(name);
      }
      const failures: Record<string, [string, string]> = { ...sample.failures };
      if (sample.keyed) failures['401'] = [sample.ok, 'missing_api_key'];
      for (const [status, [url, code]] of Object.entries(failures)) {
        const res = status === '401' ? await api.request.get(url) : await get(url);
        expect(res.status, url).toBe(Number(status));
        expect(res.body.error.code, url).toBe(code);
        const documented = op.responses[status];
        expect(documented, `${path} ${status}`).toBeDefined();
        expect(Object.keys(documented.content['application/json'].examples), `${path} ${status}`).toContain(code);
        for (const name of headerNames(documented)) {
          if (name !== 'retry-after') expect(res.headers, `${path} ${status} ${name}`).toHaveProperty(name);
        }
      }
    }
  });
});
