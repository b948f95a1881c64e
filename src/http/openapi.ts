import { z } from 'zod';
import { categoriesQuery, changesQuery, detailQuery, listQuery, searchQuery } from './query-schemas.js';
import {
  articleDetailSchema,
  articleSchema,
  imageSchema,
  sectionSchema,
  articleListSchema,
  articleResponseSchema,
  changeListSchema,
  changeSchema,
  errorSchema,
  healthSchema,
  searchResultsSchema,
  sectionListSchema,
} from './response-schemas.js';

/*
 * The OpenAPI 3.1 document, generated from the zod schemas the routes parse and serialize
 * with. OpenAPI 3.1 uses JSON Schema 2020-12, which is zod's own target.
 */

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType): JsonSchema {
  const out = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' }) as JsonSchema;
  delete out.$schema;
  return out;
}

function parameters(query: z.ZodObject): JsonSchema[] {
  return Object.entries(query.shape).map(([name, field]) => {
    const schema = jsonSchema(field as z.ZodType);
    const description = schema.description;
    delete schema.description;
    return {
      name,
      in: 'query',
      required: !(field as z.ZodType).safeParse(undefined).success,
      ...(description ? { description } : {}),
      schema,
    };
  });
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonSchema, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

const errors = {
  '400': json(ref('Error'), 'A parameter breaks its rule (`invalid_parameter`, with `param`).'),
  '401': json(ref('Error'), 'Missing, invalid or revoked API key.'),
  '503': json(ref('Error'), 'The service cannot read its own store; retry later.'),
};
const cached = {
  '304': { description: 'Not modified: the copy matching `If-None-Match` is current.' },
};

function operation(summary: string, query: z.ZodObject, okSchema: string, extra: JsonSchema[] = [], more = {}) {
  return {
    get: {
      summary,
      security: [{ ApiKey: [] }],
      parameters: [...extra, ...parameters(query)],
      responses: { '200': json(ref(okSchema), 'Success. Cache for at least five minutes.'), ...cached, ...errors, ...more },
    },
  };
}

const PUBLIC_SCHEMAS = [
  imageSchema,
  articleSchema,
  articleDetailSchema,
  sectionSchema,
  articleListSchema,
  searchResultsSchema,
  articleResponseSchema,
  sectionListSchema,
  changeSchema,
  changeListSchema,
  errorSchema,
  healthSchema,
];

export function buildOpenApiDocument(): JsonSchema {
  // Every response schema carries a `meta({ id })`: zod emits each once, referenced by id.
  const { schemas: all } = z.toJSONSchema(z.globalRegistry, {
    target: 'draft-2020-12',
    io: 'output',
    unrepresentable: 'any',
    uri: (id: string) => `#/components/schemas/${id}`,
  });
  const schemas: Record<string, JsonSchema> = {};
  for (const schema of PUBLIC_SCHEMAS) {
    const id = z.globalRegistry.get(schema)?.id as string;
    const { $schema: _schema, $id: _id, ...rest } = all[id] as JsonSchema;
    schemas[id] = rest;
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Article syndication API',
      version: '1.0.0',
      description:
        'Read-only JSON API for partners syndicating published articles in English and Chinese. ' +
        'Every endpoint under /api/v1 except this document needs the X-API-Key header. Cache responses ' +
        'for at least five minutes, and link back to each article with its `url`.',
    },
    components: {
      securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
      schemas,
    },
    paths: {
      '/api/v1/articles': operation('Published articles, newest first', listQuery, 'ArticleList'),
      '/api/v1/articles/{slug}': operation(
        'One article with its Markdown body',
        detailQuery,
        'ArticleResponse',
        [{ name: 'slug', in: 'path', required: true, schema: { type: 'string' }, description: 'Article slug, matched exactly within the locale.' }],
        {
          '404': json(
            ref('Error'),
            'No published article with this slug in this locale (`not_found`), or it was taken down and its delete is still in the change feed (`article_removed`).',
          ),
        },
      ),
      '/api/v1/changes': operation(
        'The change feed: every change in what partners see, compacted, cursor-paged',
        changesQuery,
        'ChangeList',
        [],
        {
          '400': json(
            ref('Error'),
            'A parameter breaks its rule (`invalid_parameter`), or `since` is malformed or older than the retained history (`invalid_cursor`: read again without `since`).',
          ),
        },
      ),
      '/api/v1/categories': operation('Active sections in editorial order', categoriesQuery, 'SectionList'),
      '/api/v1/search': operation('Full-text search, most relevant first', searchQuery, 'SearchResults'),
      '/health': {
        get: {
          summary: 'Service health (no key)',
          responses: {
            '200': json(ref('Health'), 'The snapshot is readable.'),
            '503': json(ref('Health'), 'The snapshot cannot be read, or has never been synced.'),
          },
        },
      },
      '/api/v1/openapi.json': {
        get: { summary: 'This document (no key)', responses: { '200': { description: 'OpenAPI 3.1 document.' } } },
      },
    },
  };
}
