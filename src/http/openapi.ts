import { z } from 'zod';
import { ERROR_CODES, KEYED_ERRORS, type ErrorCode } from './openapi-errors.js';
import { OPERATIONS, type OperationSpec } from './openapi-operations.js';
import { articleDetailSchema, articleSchema, changeSchema, errorSchema, highlightedTextSchema, highlightsSchema, imageSchema, searchHitSchema, sectionSchema } from './response-schemas.js';

/*
 * The OpenAPI 3.1 document, generated from the zod schemas the routes parse and serialize
 * with (OpenAPI 3.1 uses JSON Schema 2020-12, zod's own target) and from the operations
 * table (src/http/openapi-operations.ts), so it cannot drift from what the API does.
 */

type Json = Record<string, unknown>;

function jsonSchema(schema: z.ZodType): Json {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' }) as Json;
  delete out.$schema;
  return out;
}

function queryParameters(query: z.ZodObject): Json[] {
  return Object.entries(query.shape).map(([name, field]) => {
    const { description, examples, ...schema } = jsonSchema(field as z.ZodType);
    return {
      name,
      in: 'query',
      required: !(field as z.ZodType).safeParse(undefined).success,
      ...(description ? { description } : {}),
      schema,
      ...(Array.isArray(examples) && examples.length > 0 ? { example: examples[0] } : {}),
    };
  });
}

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });
const schemaRef = (schema: z.ZodType | Json): Json =>
  schema instanceof z.ZodType ? ref('schemas', z.globalRegistry.get(schema)?.id as string) : schema;
const headers = (names: string[]) => Object.fromEntries(names.map((n) => [HEADER_NAMES[n] ?? n, ref('headers', n)]));

/** Header components, by component name; HEADER_NAMES gives the field name where they differ. */
const HEADERS: Record<string, Json> = {
  RequestId: header(
    'An id for this request, in our logs too: quote it when you contact us. Sent on every response but the server\'s own ' +
      'refusals of a request it could not read (see the Error schema).',
    'b9f3c1d2-5a8e-4c1b-9a53-0f6e2d7c4a10',
  ),
  CacheControl: header('Cache this answer for at least five minutes, as the partner terms ask.', 'public, max-age=300'),
  CacheControlNoStore: header('Do not cache: errors and health are never cached.', 'no-store'),
  Vary: header('Answers depend on the API key.', 'X-API-Key'),
  ETag: header('Strong validator of the body: send it back in If-None-Match to revalidate.', '"kq8S0b7XK6tqj0lZ0m2L1b1T9a0yq3rC"'),
  LastModified: header('When this content last changed (a sync, or a scheduled article appearing).', 'Tue, 20 Oct 2026 08:00:00 GMT'),
  Link: header(
    'Pages of the same query (RFC 8288): `next` and `prev` when they exist, `first` and `last` when there is any result. ' +
      'Targets are path-absolute (`/api/v1/...?...`): resolve them against the request URL. Only `page` differs from the request.',
    '</api/v1/articles?locale=en&limit=20&page=3>; rel="next", </api/v1/articles?locale=en&limit=20&page=1>; rel="prev", ' +
      '</api/v1/articles?locale=en&limit=20&page=1>; rel="first", </api/v1/articles?locale=en&limit=20&page=8>; rel="last"',
  ),
  RetryAfter: { ...header('Seconds to wait before retrying.', '30'), schema: { type: 'integer', minimum: 1 } },
  RateLimitPolicy: header(
    "Your key's rate policy (IETF draft-ietf-httpapi-ratelimit-headers-10): `q` requests per `w` seconds. " +
      'Sent on every answer to a valid key while a rate applies to it.',
    '"default";q=100;w=10',
  ),
  RateLimit: header(
    'Where you stand: `r` requests you may send now, `t` seconds until your whole burst is back. ' +
      'Sent on every answer to a valid key while a rate applies to it.',
    '"default";r=97;t=1',
  ),
};
const HEADER_NAMES: Record<string, string> = {
  RequestId: 'X-Request-Id',
  CacheControl: 'Cache-Control',
  CacheControlNoStore: 'Cache-Control',
  LastModified: 'Last-Modified',
  RetryAfter: 'Retry-After',
  RateLimitPolicy: 'RateLimit-Policy',
};

const RATE_HEADERS = ['RateLimitPolicy', 'RateLimit'];

function header(description: string, example: string): Json {
  return { description, schema: { type: 'string' }, example };
}

const CONDITIONAL_PARAMETERS: Record<string, Json> = {
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description:
      'ETags of the copies you hold (a list, `W/` prefixes and `*` accepted). A match answers 304 with no body, ' +
      'whatever your Cache-Control says (fetch adds `no-cache`; it does not matter).',
    schema: { type: 'string' },
    example: '"kq8S0b7XK6tqj0lZ0m2L1b1T9a0yq3rC"',
  },
  IfModifiedSince: {
    name: 'If-Modified-Since',
    in: 'header',
    required: false,
    description: 'The Last-Modified of your copy. Honoured only when If-None-Match is absent: 304 when nothing changed since.',
    schema: { type: 'string' },
    example: 'Tue, 20 Oct 2026 08:00:00 GMT',
  },
};

/** One response per status, each code of that status as a named example. */
function errorResponses(codes: ErrorCode[], keyed: boolean): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_CODES[code].status, [...(byStatus.get(ERROR_CODES[code].status) ?? []), code]);
  const out: Record<string, Json> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const retry = list.some((c) => 'retryAfter' in ERROR_CODES[c]);
    out[String(status)] = {
      description: list.map((c) => `\`${c}\`: ${ERROR_CODES[c].when}`).join('\n\n'),
      headers: headers([
        'CacheControlNoStore',
        'RequestId',
        ...(retry ? ['RetryAfter'] : []),
        // A 401 means the key was not valid: no rate to report.
        ...(keyed && status !== 401 ? RATE_HEADERS : []),
      ]),
      content: {
        'application/json': {
          schema: ref('schemas', 'Error'),
          examples: Object.fromEntries(
            list.map((c) => {
              const doc = ERROR_CODES[c];
              const param = 'param' in doc ? { param: doc.param } : {};
              return [c, { summary: c, value: { error: { code: c, message: doc.message, ...param } } }];
            }),
          ),
        },
      },
    };
  }
  return out;
}

function operation(spec: OperationSpec): Json {
  const cacheHeaders = spec.cached ? ['CacheControl', 'Vary', 'ETag', 'LastModified', ...(spec.paged ? ['Link'] : [])] : [];
  const okHeaders = headers([...cacheHeaders, ...(spec.okHeaders ?? []), 'RequestId', ...(spec.keyed ? RATE_HEADERS : [])]);
  const more = Object.fromEntries(
    Object.entries(spec.more ?? {}).map(([status, r]) => [
      status,
      {
        description: r.description,
        headers: okHeaders,
        content: { 'application/json': { schema: schemaRef(r.schema), example: r.example } },
      },
    ]),
  );
  const codes = [...(spec.keyed ? KEYED_ERRORS : []), ...spec.errors];
  return {
    operationId: spec.operationId,
    tags: [spec.tag],
    summary: spec.summary,
    description: spec.description,
    ...(spec.keyed ? { security: [{ ApiKey: [] }] } : {}),
    parameters: [
      ...(spec.pathParams ?? []).map((p) => ({ in: 'path', required: true, schema: { type: 'string' }, ...p })),
      ...(spec.query ? queryParameters(spec.query) : []),
      ...(spec.cached ? [ref('parameters', 'IfNoneMatch'), ref('parameters', 'IfModifiedSince')] : []),
    ],
    responses: {
      '200': {
        description: spec.ok.description,
        headers: okHeaders,
        content: { 'application/json': { schema: schemaRef(spec.ok.schema), example: spec.ok.example } },
      },
      ...(spec.cached
        ? { '304': { description: 'Not modified: your copy (If-None-Match, else If-Modified-Since) is current. No body.', headers: okHeaders } }
        : {}),
      ...errorResponses(codes, spec.keyed),
      ...more,
    },
  };
}

/** Response schemas documented as components even when no operation names them directly. */
const COMPONENT_SCHEMAS = [imageSchema, articleSchema, articleDetailSchema, searchHitSchema, highlightsSchema, highlightedTextSchema, sectionSchema, changeSchema, errorSchema];

function componentSchemas(): Record<string, Json> {
  // Every response schema carries a `meta({ id })`: zod emits each once, referenced by id.
  const { schemas: all } = z.toJSONSchema(z.globalRegistry, {
    target: 'draft-2020-12',
    io: 'output',
    unrepresentable: 'any',
    uri: (id: string) => `#/components/schemas/${id}`,
  });
  const used = [...COMPONENT_SCHEMAS, ...OPERATIONS.flatMap((o) => [o.ok.schema, ...Object.values(o.more ?? {}).map((m) => m.schema)])];
  const out: Record<string, Json> = {};
  for (const schema of used) {
    if (!(schema instanceof z.ZodType)) continue;
    const id = z.globalRegistry.get(schema)?.id as string;
    const { $schema: _schema, $id: _id, ...rest } = all[id] as Json;
    out[id] = rest;
  }
  return out;
}

export interface OpenApiOptions {
  /** `servers[0].url`: PUBLIC_BASE_URL, or `/` (relative to wherever the document was fetched). */
  serverUrl?: string;
}

export function buildOpenApiDocument(options: OpenApiOptions = {}): Json {
  const paths: Record<string, Json> = {};
  for (const spec of OPERATIONS) paths[spec.path] = { get: operation(spec) };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Article syndication API',
      version: '1.0.0',
      description:
        'Read-only JSON API for partners syndicating the published articles of our laser-industry publication, in ' +
        'English and Chinese. Every endpoint under /api/v1 except this document needs the `X-API-Key` header (ask the ' +
        'editors for a key). Cache answers for at least five minutes and revalidate with `If-None-Match`; link back to ' +
        'each article with its `url`. HEAD works wherever GET does; any other method answers 405 `method_not_allowed` ' +
        'with `Allow: GET, HEAD`. An unknown path answers 404 `not_found`. The reference for humans is at `/docs`.',
    },
    servers: [{ url: options.serverUrl ?? '/', description: 'This service' }],
    tags: [
      { name: 'Articles', description: 'Published articles: the list and one article with its body.' },
      { name: 'Sections', description: 'The sections articles belong to.' },
      { name: 'Search', description: 'Full-text search over published articles.' },
      { name: 'Changes', description: 'The change feed, for partners who keep a copy of the catalogue.' },
      { name: 'Service', description: 'No key needed: health and this document.' },
    ].filter((tag) => OPERATIONS.some((o) => o.tag === tag.name)),
    components: {
      securitySchemes: {
        ApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description: 'Your partner key (`lsk_` and 32 letters or digits), from the editors. Never in the query string.',
        },
      },
      headers: HEADERS,
      parameters: CONDITIONAL_PARAMETERS,
      schemas: componentSchemas(),
    },
    paths,
  };
}
