import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { categoriesQuery, detailQuery, listQuery, searchQuery } from '../../../src/http/endpoints/query-schemas.js';
import {
  articleListSchema,
  articleResponseSchema,
  errorSchema,
  healthSchema,
  searchResultsSchema,
  sectionListSchema,
} from '../../../src/http/contract/response-schemas.js';
import { LOCALES } from '../../../src/locale.js';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { deepStrict, isoPlus, MINUTE } from '../../support/contract-helpers.js';

const NOW = '2026-11-01T12:00:00Z';
const dir = tempDir();
const dbPath = dir.path('snapshot.db');
let api: TestApi;
let key: string;
type Json = Record<string, any>;
let doc: Json;

beforeAll(async () => {
  buildSnapshot(dbPath, {
    sections: [
      rawSection({ slug: 'fiber', name: 'Fiber', description: null }),
      rawSection({ slug: 'markets', name: 'Markets', description: 'Orders and revenue' }),
    ],
    articles: [
      rawArticle({ slug: 'plain', title: 'Laser plain', section_slug: 'fiber', author: null, published_at: isoPlus(NOW, -MINUTE) }),
      rawArticle({
        slug: 'pictured',
        title: 'Laser pictured',
        section_slug: 'markets',
        published_at: '2026-11-01T18:00:00+08:00',
        image: { url: 'https://img.example.com/1.jpg', alt: 'alt', credit: 'Sam', credit_url: 'https://p.example.com/@sam', source_url: 'https://p.example.com/1' },
      }),
    ],
  });
  key = addKey(dbPath).key;
  api = await startApi({ databasePath: dbPath, clock: testClock(NOW) });
  doc = (await api.request.get('/api/v1/openapi.json')).body as Json;
});

afterAll(async () => {
  await api.close();
  dir.cleanup();
});

const ROUTES = {
  '/api/v1/articles': { query: listQuery, sample: '/api/v1/articles' },
  '/api/v1/articles/{slug}': { query: detailQuery, sample: '/api/v1/articles/pictured' },
  '/api/v1/categories': { query: categoriesQuery, sample: '/api/v1/categories' },
  '/api/v1/search': { query: searchQuery, sample: '/api/v1/search?q=laser' },
} as const;

/** The zod schema behind each documented component, found by its registry id. */
const BY_ID: Record<string, z.ZodType> = Object.fromEntries(
  [articleListSchema, articleResponseSchema, sectionListSchema, searchResultsSchema, errorSchema, healthSchema].map((s) => [
    z.globalRegistry.get(s)?.id as string,
    s,
  ]),
);

function resolvePointer(root: Json, ref: string): unknown {
  expect(ref.startsWith('#/'), ref).toBe(true);
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const part = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    if (node === null || typeof node !== 'object' || !(part in node)) return undefined;
    node = (node as Json)[part];
  }
  return node;
}

/**
 * A small JSON Schema 2020-12 validator for exactly the keywords the document uses; an
 * unknown keyword fails the test, so the check cannot silently pass over a new construct.
 */
function validate(schema: Json, value: unknown, path = '$'): string[] {
  const errors: string[] = [];
  const known = new Set(['$ref', 'additionalProperties', 'anyOf', 'description', 'enum', 'items', 'maximum', 'minimum', 'pattern', 'properties', 'propertyNames', 'required', 'type', 'default']);
  for (const k of Object.keys(schema)) if (!known.has(k)) errors.push(`${path}: unsupported keyword ${k}`);
  if (schema.$ref) return [...errors, ...validate(resolvePointer(doc, schema.$ref) as Json, value, path)];
  if (schema.anyOf) {
    const branches = (schema.anyOf as Json[]).map((s) => validate(s, value, path));
    if (branches.every((b) => b.length > 0)) errors.push(`${path}: matches no anyOf branch (${branches.flat().join('; ')})`);
  }
  if (schema.type) {
    const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
    const actual = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
    const ok = types.some((t) => t === actual || (t === 'integer' && Number.isInteger(value)));
    if (!ok) return [...errors, `${path}: expected ${types.join('|')}, got ${actual}`];
  }
  if (schema.enum && !(schema.enum as unknown[]).includes(value)) errors.push(`${path}: ${JSON.stringify(value)} not in enum`);
  if (schema.pattern && typeof value === 'string' && !new RegExp(schema.pattern, 'u').test(value)) errors.push(`${path}: does not match ${schema.pattern}`);
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) errors.push(`${path}: below minimum`);
    if (schema.maximum !== undefined && value > schema.maximum) errors.push(`${path}: above maximum`);
  }
  if (schema.items && Array.isArray(value)) value.forEach((v, i) => errors.push(...validate(schema.items, v, `${path}[${i}]`)));
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Json;
    const props = (schema.properties ?? {}) as Json;
    for (const name of (schema.required ?? []) as string[]) if (!(name in obj)) errors.push(`${path}: missing ${name}`);
    for (const [name, v] of Object.entries(obj)) {
      if (name in props) errors.push(...validate(props[name], v, `${path}.${name}`));
      else if (schema.additionalProperties === false) errors.push(`${path}: unexpected property ${name}`);
      else if (typeof schema.additionalProperties === 'object') errors.push(...validate(schema.additionalProperties, v, `${path}.${name}`));
      if (schema.propertyNames) errors.push(...validate(schema.propertyNames, name, `${path}{${name}}`));
    }
  }
  return errors;
}

describe('GET /api/v1/openapi.json', () => {
  it('is served without a key as an OpenAPI 3.1.0 document', async () => {
    const res = await api.request.get('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
  });

  it('documents the five endpoints, /health and itself', () => {
    expect(Object.keys(doc.paths).sort()).toEqual(
      ['/api/v1/articles', '/api/v1/articles/{slug}', '/api/v1/categories', '/api/v1/changes', '/api/v1/search', '/health', '/api/v1/openapi.json'].sort(),
    );
    for (const path of Object.keys(doc.paths)) expect(Object.keys(doc.paths[path]), path).toEqual(['get']);
  });

  it('documents exactly the query parameters each route parses, with the same required flags and defaults', () => {
    for (const [path, { query }] of Object.entries(ROUTES)) {
      const params = (doc.paths[path].get.parameters as Json[]).filter((p) => p.in === 'query');
      expect(params.map((p) => p.name), path).toEqual(Object.keys(query.shape));
      for (const param of params) {
        const field = (query.shape as Record<string, z.ZodType>)[param.name]!;
        const optional = field.safeParse(undefined);
        expect(param.required, `${path} ${param.name}`).toBe(!optional.success);
        if (optional.success && optional.data !== undefined) expect(param.schema.default, `${path} ${param.name}`).toEqual(optional.data);
        expect(param.description, `${path} ${param.name}`).toEqual(expect.any(String));
      }
    }
  });

  it('documents q as required on search only, and locale as en or zh everywhere', () => {
    for (const path of Object.keys(ROUTES)) {
      const params = doc.paths[path].get.parameters as Json[];
      const q = params.find((p) => p.name === 'q');
      if (path === '/api/v1/search') expect(q).toMatchObject({ in: 'query', required: true });
      else expect(q).toBeUndefined();
      const locale = params.find((p) => p.name === 'locale');
      expect(locale?.schema).toMatchObject({ type: 'string', enum: [...LOCALES], default: 'en' });
    }
  });

  it("documents limit as 1 to 50 and page from 1, which is what the schemas and the live API enforce", async () => {
    for (const path of ['/api/v1/articles', '/api/v1/search']) {
      const params = doc.paths[path].get.parameters as Json[];
      const limit = params.find((p) => p.name === 'limit');
      const page = params.find((p) => p.name === 'page');
      expect(limit?.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 50, default: 20 });
      expect(page?.schema).toMatchObject({ type: 'integer', minimum: 1, default: 1 });
      expect(page?.schema.maximum).toBe(Number.MAX_SAFE_INTEGER);

      const query = ROUTES[path as keyof typeof ROUTES].query;
      const field = (query.shape as Record<string, z.ZodType>).limit!;
      for (const n of [limit!.schema.minimum, limit!.schema.maximum]) expect(field.safeParse(String(n)).success).toBe(true);
      for (const n of [limit!.schema.minimum - 1, limit!.schema.maximum + 1]) expect(field.safeParse(String(n)).success).toBe(false);

      const sample = ROUTES[path as keyof typeof ROUTES].sample;
      const join = sample.includes('?') ? '&' : '?';
      const at = async (q: string) => (await api.request.get(`${sample}${join}${q}`).set('X-API-Key', key)).status;
      expect(await at(`limit=${limit!.schema.minimum}`)).toBe(200);
      expect(await at(`limit=${limit!.schema.maximum}`)).toBe(200);
      expect(await at(`limit=${limit!.schema.minimum - 1}`)).toBe(400);
      expect(await at(`limit=${limit!.schema.maximum + 1}`)).toBe(400);
      expect(await at(`page=${page!.schema.maximum}`)).toBe(200);
      expect(await at(`page=${page!.schema.minimum - 1}`)).toBe(400);
    }
  });

  it('documents updated_since as the date-time text partners send, which the live API accepts (and a number, which it refuses)', async () => {
    const param = (doc.paths['/api/v1/articles'].get.parameters as Json[]).find((p) => p.name === 'updated_since');
    expect(param?.schema).toEqual({ type: 'string', format: 'date-time', maxLength: 64 });
    const at = async (value: string) => (await api.request.get('/api/v1/articles').query({ updated_since: value }).set('X-API-Key', key)).status;
    expect(await at(param!.example as string)).toBe(200);
    expect(await at('1760947200000')).toBe(400);
  });

  it('documents the length limits of q and section, which the live API enforces', async () => {
    const params = doc.paths['/api/v1/search'].get.parameters as Json[];
    const q = params.find((p) => p.name === 'q')!.schema;
    const section = params.find((p) => p.name === 'section')!.schema;
    expect(q).toMatchObject({ type: 'string', minLength: 2, maxLength: 200 });
    expect(section).toMatchObject({ type: 'string', maxLength: 100 });
    const at = async (query: Record<string, string>) => (await api.request.get('/api/v1/search').query(query).set('X-API-Key', key)).status;
    expect(await at({ q: 'l'.repeat(q.minLength) })).toBe(200);
    expect(await at({ q: 'l'.repeat(q.minLength - 1) })).toBe(400);
    expect(await at({ q: 'l'.repeat(q.maxLength) })).toBe(200);
    expect(await at({ q: 'l'.repeat(q.maxLength + 1) })).toBe(400);
    expect(await at({ q: 'laser', section: 's'.repeat(section.maxLength) })).toBe(200);
    expect(await at({ q: 'laser', section: 's'.repeat(section.maxLength + 1) })).toBe(400);
  });

  it('documents the slug path parameter of the single article', () => {
    const slug = (doc.paths['/api/v1/articles/{slug}'].get.parameters as Json[]).find((p) => p.in === 'path');
    expect(slug).toMatchObject({ name: 'slug', required: true, schema: { type: 'string' } });
  });

  it('resolves every $ref inside the document', () => {
    const refs: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (k === '$ref') refs.push(v as string);
          else walk(v);
        }
      }
    };
    walk(doc);
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) {
      expect(ref, ref).toMatch(/^#\//);
      const target = resolvePointer(doc, ref);
      expect(target, ref).toEqual(expect.any(Object));
    }
  });

  it('declares the X-API-Key header scheme, required by the four endpoints and not by the other two', async () => {
    expect(doc.components.securitySchemes).toEqual({ ApiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }) });
    expect(doc.security).toBeUndefined();
    for (const path of Object.keys(ROUTES)) expect(doc.paths[path].get.security, path).toEqual([{ ApiKey: [] }]);
    // Said explicitly (an empty requirement), as Redocly's security-defined rule asks.
    for (const path of ['/health', '/api/v1/openapi.json']) expect(doc.paths[path].get.security, path).toEqual([]);
    // And the live API agrees.
    for (const { sample } of Object.values(ROUTES)) expect((await api.request.get(sample)).status, sample).toBe(401);
    for (const path of ['/health', '/api/v1/openapi.json']) expect((await api.request.get(path)).status, path).toBe(200);
  });

  it('documents the 404 of the single article and the 400, 401, 500 and 503 of every endpoint', () => {
    for (const path of Object.keys(ROUTES)) {
      const responses = doc.paths[path].get.responses as Json;
      for (const status of ['200', '304', '400', '401', '500', '503']) expect(responses, `${path} ${status}`).toHaveProperty(status);
      for (const status of ['400', '401', '500', '503']) expect(responses[status].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
      expect(responses['401'].headers).toHaveProperty('WWW-Authenticate');
    }
    expect(doc.paths['/api/v1/articles/{slug}'].get.responses).toHaveProperty('404');
    expect(Object.keys(doc.paths['/health'].get.responses).sort()).toEqual(['200', '4XX', '500', '503']);
  });
});

describe('live responses match the documented and the zod schemas', () => {
  const liveErrors = () => [
    api.request.get('/api/v1/articles?limit=0').set('X-API-Key', key),
    api.request.get('/api/v1/articles'),
    api.request.get('/api/v1/articles').set('X-API-Key', `lsk_${'0'.repeat(32)}`),
    api.request.get('/api/v1/articles/nope').set('X-API-Key', key),
    api.request.delete('/api/v1/articles'),
  ];

  it('validates a 200 of each endpoint against its documented schema and its strict zod schema', async () => {
    for (const [path, { sample }] of Object.entries(ROUTES)) {
      const res = await api.request.get(sample).set('X-API-Key', key);
      expect(res.status, sample).toBe(200);
      const ref = doc.paths[path].get.responses['200'].content['application/json'].schema.$ref as string;
      const id = ref.split('/').at(-1) as string;
      expect(validate({ $ref: ref }, res.body), sample).toEqual([]);
      expect(BY_ID[id], id).toBeDefined();
      deepStrict(BY_ID[id]!).parse(res.body);
      if (Array.isArray(res.body.data)) expect(res.body.data.length, sample).toBeGreaterThan(0);
    }
  });

  it('covers an article with and without image and author, and a section with and without description', async () => {
    const list = await api.request.get('/api/v1/articles').set('X-API-Key', key);
    const images = list.body.data.map((a: { image: unknown }) => a.image);
    expect(images).toContain(null);
    expect(images.some((i: unknown) => i !== null)).toBe(true);
    expect(validate({ $ref: '#/components/schemas/ArticleList' }, list.body)).toEqual([]);
    const sections = await api.request.get('/api/v1/categories').set('X-API-Key', key);
    expect(sections.body.data.map((s: { description: unknown }) => s.description)).toContain(null);
    expect(validate({ $ref: '#/components/schemas/SectionList' }, sections.body)).toEqual([]);
  });

  it('validates /health against Health, and rejects what the document forbids', async () => {
    const res = await api.request.get('/health');
    expect(validate(doc.paths['/health'].get.responses['200'].content['application/json'].schema, res.body)).toEqual([]);
    deepStrict(healthSchema).parse(res.body);
    // The validator is not a rubber stamp.
    expect(validate({ $ref: '#/components/schemas/Health' }, { ...res.body, extra: 1 })).not.toEqual([]);
    expect(validate({ $ref: '#/components/schemas/ArticleList' }, { data: [{}], meta: {} })).not.toEqual([]);
  });

  it('validates every error response against Error, with a code the document lists', async () => {
    const listed = doc.components.schemas.Error.properties.error.properties.code.description as string;
    for (const pending of liveErrors()) {
      const res = await pending;
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(validate({ $ref: '#/components/schemas/Error' }, res.body)).toEqual([]);
      deepStrict(errorSchema).parse(res.body);
      expect(listed).toContain(res.body.error.code);
    }
  });

  it('documents every field a live article carries, and only those', async () => {
    const detail = await api.request.get('/api/v1/articles/pictured').set('X-API-Key', key);
    const documented = doc.components.schemas.ArticleDetail;
    // Every field `fields` can ask for is documented; the default answer's are the required ones.
    const everything = await api.request.get('/api/v1/articles/pictured?fields=body,body_html,body_text,title,url').set('X-API-Key', key);
    expect(Object.keys(documented.properties).sort()).toEqual([...new Set([...Object.keys(detail.body.data), ...Object.keys(everything.body.data)])].sort());
    expect([...documented.required].sort()).toEqual(Object.keys(detail.body.data).sort());
    const search = await api.request.get('/api/v1/search?q=laser').set('X-API-Key', key);
    expect(Object.keys(search.body.meta).sort()).toEqual(Object.keys(doc.components.schemas.SearchResults.properties.meta.properties).sort());
  });
});
