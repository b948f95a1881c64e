import { z } from 'zod';
import { ERROR_CATALOGUE, type ErrorCode } from '../../error-catalogue.js';
import { API_KEY_CHALLENGE, AppError } from '../../errors.js';
import { parseQuery } from '../endpoints/parse-query.js';
import { CACHE_CONTROL, KEYLESS_CACHE_CONTROL } from '../cache/representation.js';
import { operationErrors, SERVER_REFUSALS } from './openapi-errors.js';
import { OPERATIONS, type OperationSpec } from './openapi-operations.js';
import { articleDetailSchema, articleSchema, changeSchema, errorSchema, highlightedTextSchema, highlightsSchema, imageSchema, searchHitSchema, sectionSchema } from './response-schemas.js';

/*
 * One piece on purpose (over 300 lines): the document is assembled in one pass from the
 * operations table, the zod schemas and the error catalogue, and its parts (parameters, shared
 * headers, components) refer to each other by name; the operations themselves and their
 * examples live in openapi-operations.ts and openapi-examples.ts.
 */

/*
 * The OpenAPI 3.1 document, generated from the zod schemas the routes parse and serialize
 * with (OpenAPI 3.1 uses JSON Schema 2020-12, zod's own target) and from the operations
 * table (src/http/contract/openapi-operations.ts), so it cannot drift from what the API does.
 */

type Json = Record<string, unknown>;

/**
 * zod writes every `int()` as bounded by ±(2^53 - 1), JavaScript's safe integers: true of any
 * JSON number we send, but read by a partner as the field's range. Left out of the response
 * schemas; a field with a real range says it itself (`min`, `max` in src/http/contract/response-schemas.ts).
 * Query parameters keep theirs: there the API enforces them (page is at most 2^53 - 1).
 */
function dropSafeIntegerBounds({ jsonSchema: out }: { jsonSchema: Record<string, unknown> }): void {
  if (out.minimum === Number.MIN_SAFE_INTEGER) delete out.minimum;
  if (out.maximum === Number.MAX_SAFE_INTEGER) delete out.maximum;
}

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
  CacheControl: header(
    'Keep this answer in your own cache for five minutes, as the partner terms ask (`max-age=300`). A shared cache ' +
      'serving several keys (a proxy or CDN) must revalidate it on every request (`s-maxage=0, proxy-revalidate`), so ' +
      'that a revoked key is refused at once.',
    CACHE_CONTROL,
  ),
  CacheControlNoStore: header('Do not cache: errors and health are never cached.', 'no-store'),
  CacheControlPublic: header('The same for everyone and needs no key: any cache, shared ones included, may keep it five minutes.', KEYLESS_CACHE_CONTROL),
  Vary: header(
    'Answers depend on the API key, and (those of 1 KB or more) on Accept-Encoding: they come with ' +
      '`Content-Encoding: gzip` or `br` when asked for.',
    'X-API-Key, Accept-Encoding',
  ),
  VaryEncoding: header('Compressed (`Content-Encoding: gzip` or `br`) when asked for with Accept-Encoding.', 'Accept-Encoding'),
  ETag: header(
    'Strong validator of the body as sent: send it back in If-None-Match to revalidate. A compressed answer has its own (`-gz` or `-br` before the closing quote).',
    '"kq8S0b7XK6tqj0lZ0m2L1b1T9a0yq3rC"',
  ),
  LastModified: header('When this content last changed (a sync, or a scheduled article appearing).', 'Tue, 20 Oct 2026 08:00:00 GMT'),
  Link: header(
    'Pages of the same query (RFC 8288): `next` and `prev` when they exist, `first` and `last` when there is any result. ' +
      'Targets are path-absolute (`/api/v1/...?...`, after the path of `servers[0].url` when it has one): resolve them ' +
      'against the request URL. Only `page` differs from the request.',
    '</api/v1/articles?locale=en&limit=20&page=3>; rel="next", </api/v1/articles?locale=en&limit=20&page=1>; rel="prev", ' +
      '</api/v1/articles?locale=en&limit=20&page=1>; rel="first", </api/v1/articles?locale=en&limit=20&page=8>; rel="last"',
  ),
  RetryAfter: { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 }, example: 30 },
  WWWAuthenticate: header(
    'The challenge of every 401 (RFC 9110): the `ApiKey` scheme, sent in the `X-API-Key` header (see the security scheme).',
    API_KEY_CHALLENGE,
  ),
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
  CacheControlPublic: 'Cache-Control',
  VaryEncoding: 'Vary',
  LastModified: 'Last-Modified',
  RetryAfter: 'Retry-After',
  WWWAuthenticate: 'WWW-Authenticate',
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
      'ETags of the copies you hold (a list, `W/` prefixes and `*` accepted), e.g. `"kq8S0b7XK6tqj0lZ0m2L1b1T9a0yq3rC"`. ' +
      'A match answers 304 with no body, whatever your Cache-Control says (fetch adds `no-cache`; it does not matter).',
    // No `example`: "Try it out" would send it (see src/http/endpoints/query-schemas.ts, section).
    // The bound is the server's: all the request's headers together must fit in 16 KB (else 431).
    schema: { type: 'string', maxLength: 8_192 },
  },
  IfModifiedSince: {
    name: 'If-Modified-Since',
    in: 'header',
    required: false,
    description:
      'The Last-Modified of your copy, e.g. `Tue, 20 Oct 2026 08:00:00 GMT`. Honoured only when If-None-Match is absent: ' +
      '304 when nothing changed since.',
    // An HTTP date is 29 characters; anything longer is not one and is ignored (RFC 9110).
    schema: { type: 'string', maxLength: 64 },
  },
};

/**
 * The operation's own `invalid_parameter` answer, made by its query schema: a `limit` out of
 * range where it has one (1 to 50 for pages, 1 to 100 for the change feed), else a locale.
 */
function invalidParameterExample(query: z.ZodObject | undefined): { param: string; message: string } | undefined {
  if (!query) return undefined;
  try {
    parseQuery({ url: 'limit' in query.shape ? '?limit=0' : '?locale=fr' }, query);
  } catch (error) {
    if (error instanceof AppError && error.details.param) return { param: error.details.param, message: error.message };
  }
  return undefined;
}

/**
 * What an operation with no 4xx of its own can still answer: the HTTP server's refusal of a
 * request it could not read (src/http/server/server-limits.ts), before any route.
 */
const serverRefusal: Json = {
  description:
    "The server's own refusal of a request it could not read: " +
    Object.entries(SERVER_REFUSALS)
      .map(([code, status]) => `${status} \`${code}\``)
      .join(', ') +
    '. Those of a request that could not be read at all carry no X-Request-Id.',
  headers: headers(['CacheControlNoStore']),
  content: {
    'application/json': {
      schema: ref('schemas', 'Error'),
      example: { error: { code: 'headers_too_large', message: 'The request headers are too large; send fewer or shorter headers.' } },
    },
  },
};

/** One response per status, each code of that status as a named example. */
function errorResponses(codes: ErrorCode[], keyed: boolean, query?: z.ZodObject): Record<string, Json> {
  const ownInvalid = invalidParameterExample(query);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_CATALOGUE[code].status, [...(byStatus.get(ERROR_CATALOGUE[code].status) ?? []), code]);
  const out: Record<string, Json> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const retry = list.some((c) => 'retryAfter' in ERROR_CATALOGUE[c]);
    out[String(status)] = {
      description: list.map((c) => `\`${c}\`: ${ERROR_CATALOGUE[c].when}`).join('\n\n'),
      headers: headers([
        'CacheControlNoStore',
        'RequestId',
        ...(retry ? ['RetryAfter'] : []),
        ...(status === 401 ? ['WWWAuthenticate'] : []),
        // A 401 means the key was not valid: no rate to report.
        ...(keyed && status !== 401 ? RATE_HEADERS : []),
      ]),
      content: {
        'application/json': {
          schema: ref('schemas', 'Error'),
          examples: Object.fromEntries(
            list.map((c) => {
              if (c === 'invalid_parameter' && ownInvalid) return [c, { summary: c, value: { error: { code: c, ...ownInvalid } } }];
              return [c, { summary: c, value: { error: { code: c, ...ERROR_CATALOGUE[c].example } } }];
            }),
          ),
        },
      },
    };
  }
  return out;
}

function operation(spec: OperationSpec): Json {
  const cacheHeaders = spec.cached
    ? [
        ...(spec.keyed ? ['CacheControl', 'Vary'] : ['CacheControlPublic', 'VaryEncoding']),
        'ETag',
        'LastModified',
        ...(spec.paged ? ['Link'] : []),
      ]
    : [];
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
  // A fault of ours (internal_error, 500) can end any request: listed on every operation.
  const codes: ErrorCode[] = [...operationErrors(spec.operationId, spec.keyed), 'internal_error'];
  return {
    operationId: spec.operationId,
    tags: [spec.tag],
    summary: spec.summary,
    description: spec.description,
    // An operation without a key says so (an empty requirement), rather than by omission.
    security: spec.keyed ? [{ ApiKey: [] }] : [],
    parameters: [
      ...(spec.pathParams ?? []).map(({ maxLength, ...p }) => ({ in: 'path', required: true, schema: { type: 'string', maxLength }, ...p })),
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
      ...errorResponses(codes, spec.keyed, spec.query),
      ...(codes.some((c) => ERROR_CATALOGUE[c].status < 500) ? {} : { '4XX': serverRefusal }),
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
    override: dropSafeIntegerBounds,
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
      // Partners have a named technical contact in their agreement; there is no public address.
      contact: { name: 'The technical contact named in your partner agreement (quote the X-Request-Id)' },
      // The content is ours, syndicated under each partner's agreement: no open licence applies.
      // SPDX's LicenseRef- form names a licence outside its list.
      license: { name: 'Proprietary: for partners under their syndication agreement', identifier: 'LicenseRef-Partner-Syndication-Agreement' },
      description:
        'Read-only JSON API for partners syndicating the published articles of our laser-industry publication, in ' +
        'English and Chinese. Every endpoint under /api/v1 except this document needs the `X-API-Key` header (ask the ' +
        'editors for a key). A key may be limited to some locales and sections (its scope): it then sees the service as if ' +
        'nothing outside them existed (lists, totals, search, categories and the change feed hold only its sections; an ' +
        'article outside them is 404 `not_found`), and a locale outside them answers 403 `locale_not_allowed`. Cache answers for at least five minutes and revalidate with `If-None-Match`; link back to ' +
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
