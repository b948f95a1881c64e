import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { linkHeader } from '../../src/http/cache/page-links.js';
import { parseQuery } from '../../src/http/endpoints/parse-query.js';
import { listQuery, searchQuery } from '../../src/http/endpoints/query-schemas.js';
import { declareRoute, ROUTE_LIST, ROUTES } from '../../src/http/endpoints/routes-table.js';

/*
 * One declaration per endpoint (issue 33): the cache key and the parameters the Link header
 * keeps are derived from the endpoint's query schema, so a parameter added to the schema is in
 * both without anyone remembering two hand-written lists.
 */

const withColour = declareRoute('/api/v1/articles', {
  keyed: true,
  fast: true,
  paged: true,
  query: listQuery.extend({ colour: z.enum(['red', 'blue']).optional() }),
});

describe('an endpoint declaration', () => {
  it('puts a new query parameter in the cache key by itself', () => {
    const red = parseQuery({ url: '/api/v1/articles?colour=red' }, withColour.query);
    const blue = parseQuery({ url: '/api/v1/articles?colour=blue' }, withColour.query);
    const none = parseQuery({ url: '/api/v1/articles' }, withColour.query);
    const keys = new Set([withColour.cacheKey(red), withColour.cacheKey(blue), withColour.cacheKey(none)]);
    expect(keys.size).toBe(3);
    // A repeated query string gives the very same key (the parse and the key are remembered).
    expect(withColour.cacheKey(parseQuery({ url: '/api/v1/articles?colour=red' }, withColour.query))).toBe(withColour.cacheKey(red));
  });

  it('keeps a new query parameter in the Link header by itself', () => {
    expect([...withColour.linkParams]).toContain('colour');
    const header = linkHeader('/api/v1/articles?colour=red&limit=2&junk=1', { page: 1, pages: 2 }, withColour.linkParams);
    expect(header).toBe('</api/v1/articles?colour=red&limit=2&page=2>; rel="next", </api/v1/articles?colour=red&limit=2&page=1>; rel="first", </api/v1/articles?colour=red&limit=2&page=2>; rel="last"');
    // The declared list route does not know it, and leaves it out.
    expect(linkHeader('/api/v1/articles?colour=red&limit=2', { page: 1, pages: 2 }, ROUTES.articles.linkParams)).not.toContain('colour');
  });

  it('derives the Link parameters and the key from every parameter of the schema', () => {
    expect([...ROUTES.articles.linkParams].sort()).toEqual(Object.keys(listQuery.shape).filter((n) => n !== 'page').sort());
    expect([...ROUTES.search.linkParams].sort()).toEqual(Object.keys(searchQuery.shape).filter((n) => n !== 'page').sort());
    for (const route of ROUTE_LIST) {
      if (!route.query) continue;
      const q = parseQuery({ url: `${route.path}?q=laser` }, route.query);
      for (const name of Object.keys(route.query.shape)) {
        // Each parameter's value shows in the key: changing any one changes the key, but for
        // those the declaration names as changing only when the answer is sent (`wait`).
        const changed = { ...q, [name]: `changed-${name}` };
        if (route.notInCacheKey.has(name)) expect(route.cacheKey(changed), `${route.name} ${name}`).toBe(route.cacheKey(q));
        else expect(route.cacheKey(changed), `${route.name} ${name}`).not.toBe(route.cacheKey(q));
      }
    }
  });

  it('leaves only the feed wait parameter out of a cache key: the same page whether it waited or not', () => {
    expect(ROUTE_LIST.filter((r) => r.notInCacheKey.size > 0).map((r) => [r.name, [...r.notInCacheKey]])).toEqual([['/api/v1/changes', ['wait']]]);
  });

  it('only pages carry Link parameters, and every fast route has a query schema', () => {
    for (const route of ROUTE_LIST) {
      if (!route.paged) expect(route.linkParams.size, route.name).toBe(0);
      if (route.fast) expect(route.query, route.name).toBeDefined();
    }
  });
});
