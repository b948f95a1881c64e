/** Validation of search parameters, as the engine's deserializer does it. */
import { badRequest, describeJson, invalidType, notImplemented, unknownField } from '../errors.js';
import { assertLocale } from '../settings.js';
import { isPlainObject } from '../values.js';

const SEARCH_FIELDS = [
  'q', 'offset', 'limit', 'page', 'hitsPerPage', 'attributesToRetrieve', 'retrieveVectors', 'attributesToCrop', 'cropLength',
  'cropMarker', 'attributesToHighlight', 'highlightPreTag', 'highlightPostTag', 'showMatchesPosition', 'showRankingScore',
  'showRankingScoreDetails', 'showPerformanceDetails', 'filter', 'sort', 'distinct', 'facets', 'matchingStrategy',
  'attributesToSearchOn', 'rankingScoreThreshold', 'locales', 'hybrid', 'vector', 'media', 'personalize',
] as const;

/** Parameters this fake cannot honour faithfully; answering without them would mislead a test. */
const UNSUPPORTED = ['showRankingScore', 'showRankingScoreDetails', 'showPerformanceDetails', 'rankingScoreThreshold', 'hybrid', 'vector', 'media', 'personalize'];

export interface SearchParams {
  q: string | null;
  offset: number;
  limit: number;
  page: number | null;
  hitsPerPage: number | null;
  attributesToRetrieve: string[] | null;
  attributesToCrop: string[] | null;
  cropLength: number;
  cropMarker: string;
  attributesToHighlight: string[] | null;
  highlightPreTag: string;
  highlightPostTag: string;
  showMatchesPosition: boolean;
  filter: unknown;
  sort: string[] | null;
  distinct: string | null;
  facets: string[] | null;
  matchingStrategy: 'last' | 'all' | 'frequency';
  attributesToSearchOn: string[] | null;
  locales: string[] | null;
}

const code = (field: string): string => `invalid_search_${field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;

function uint(body: Record<string, unknown>, field: string, fallback: number): number {
  const v = body[field];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw invalidType(code(field), `.${field}`, 'a positive integer', v);
  return v;
}

function optUint(body: Record<string, unknown>, field: string): number | null {
  return body[field] === undefined || body[field] === null ? null : uint(body, field, 0);
}

function str(body: Record<string, unknown>, field: string, fallback: string): string {
  const v = body[field];
  if (v === undefined) return fallback;
  if (typeof v !== 'string') throw invalidType(code(field), `.${field}`, 'a string', v);
  return v;
}

function strList(body: Record<string, unknown>, field: string): string[] | null {
  const v = body[field];
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v)) throw invalidType(code(field), `.${field}`, 'an array', v);
  v.forEach((item, i) => {
    if (typeof item !== 'string') throw invalidType(code(field), `.${field}[${i}]`, 'a string', item);
  });
  return v as string[];
}

/** Validates a search body the way the engine's deserializer does: unknown fields and wrong types are 400s. */
export function parseSearchParams(body: unknown): SearchParams {
  if (!isPlainObject(body)) throw badRequest('bad_request', `Invalid value type: expected an object, but found ${describeJson(body)}`);
  for (const key of Object.keys(body)) {
    if (!(SEARCH_FIELDS as readonly string[]).includes(key)) throw unknownField('', key, SEARCH_FIELDS);
  }
  for (const key of UNSUPPORTED) {
    const v = body[key];
    if (v !== undefined && v !== null && v !== false) throw notImplemented(`the \`${key}\` search parameter`);
  }
  if (body['retrieveVectors'] === true) throw notImplemented('the `retrieveVectors` search parameter');
  const q = body['q'];
  if (q !== undefined && q !== null && typeof q !== 'string') throw invalidType('invalid_search_q', '.q', 'a string', q);
  const strategy = body['matchingStrategy'] ?? 'last';
  if (strategy !== 'last' && strategy !== 'all' && strategy !== 'frequency') {
    throw badRequest('invalid_search_matching_strategy', `Unknown value \`${String(strategy)}\` at \`.matchingStrategy\`: expected one of \`last\`, \`all\`, \`frequency\``);
  }
  const showMatchesPosition = body['showMatchesPosition'] ?? false;
  if (typeof showMatchesPosition !== 'boolean') throw invalidType(code('showMatchesPosition'), '.showMatchesPosition', 'a boolean', showMatchesPosition);
  const distinct = body['distinct'];
  if (distinct !== undefined && distinct !== null && typeof distinct !== 'string') throw invalidType(code('distinct'), '.distinct', 'a string', distinct);
  const locales = strList(body, 'locales');
  locales?.forEach((l, i) => assertLocale(l, 'invalid_search_locales', `.locales[${i}]`));
  return {
    q: typeof q === 'string' ? q : null,
    offset: uint(body, 'offset', 0),
    limit: uint(body, 'limit', 20),
    page: optUint(body, 'page'),
    hitsPerPage: optUint(body, 'hitsPerPage'),
    attributesToRetrieve: strList(body, 'attributesToRetrieve'),
    attributesToCrop: strList(body, 'attributesToCrop'),
    cropLength: uint(body, 'cropLength', 10),
    cropMarker: str(body, 'cropMarker', '…'),
    attributesToHighlight: strList(body, 'attributesToHighlight'),
    highlightPreTag: str(body, 'highlightPreTag', '<em>'),
    highlightPostTag: str(body, 'highlightPostTag', '</em>'),
    showMatchesPosition,
    filter: body['filter'],
    sort: strList(body, 'sort'),
    distinct: typeof distinct === 'string' ? distinct : null,
    facets: strList(body, 'facets'),
    matchingStrategy: strategy,
    attributesToSearchOn: strList(body, 'attributesToSearchOn'),
    locales,
  };
}

/** Converts `GET /indexes/{uid}/search` query parameters into the POST body shape. */
export function searchGetToBody(query: URLSearchParams): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const lists = new Set(['attributesToRetrieve', 'attributesToCrop', 'attributesToHighlight', 'sort', 'facets', 'attributesToSearchOn', 'locales']);
  const numbers = new Set(['offset', 'limit', 'page', 'hitsPerPage', 'cropLength', 'rankingScoreThreshold']);
  const booleans = new Set(['showMatchesPosition', 'showRankingScore', 'showRankingScoreDetails', 'retrieveVectors', 'showPerformanceDetails']);
  for (const [key, value] of query) {
    if (lists.has(key)) body[key] = value.split(',');
    else if (numbers.has(key)) body[key] = /^\d+$/.test(value) ? Number(value) : value;
    else if (booleans.has(key)) body[key] = value === 'true' ? true : value === 'false' ? false : value;
    else body[key] = value;
  }
  return body;
}
