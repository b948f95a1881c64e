import type { IncomingMessage } from 'node:http';
import type { UsageCounter, UsageEndpoint } from '../../db/keys/usage-counter.js';
import { parseQuery } from '../endpoints/parse-query.js';
import { detailQuery } from '../endpoints/query-schemas.js';
import { ARTICLE_SLUG_AT, ROUTES, type Route } from '../endpoints/routes-table.js';
import type { ResponseHook } from './request-log.js';

/*
 * Usage per key and UTC day (docs/editors.md#usage): the per-response hook that tells the
 * keys' usage counter (src/db/keys/usage-counter.ts) what each keyed answer was. It runs after
 * the response, off the request's path; the counter writes in the background.
 */

const ENDPOINT = new Map<Route, UsageEndpoint>([
  [ROUTES.articles, 'articles'],
  [ROUTES.article, 'article'],
  [ROUTES.categories, 'categories'],
  [ROUTES.search, 'search'],
  [ROUTES.changes, 'changes'],
]);

/** Counts a response that was answered to a known key. */
export function usageHook(counter: UsageCounter): ResponseHook {
  return (req, res, context) => {
    const key = context.key;
    if (key === undefined || !res.headersSent) return;
    const status = res.statusCode;
    const route = context.route;
    const read = route === ROUTES.article && (status === 200 || status === 304) ? articleOf(req) : undefined;
    counter.count(key.id, context.startedAt, route === undefined ? undefined : ENDPOINT.get(route), status, read);
  };
}

/**
 * `locale slug` of an article URL, as the route read them (the slug decoded, the locale
 * parsed by the same schema), remembered per URL: a repeated article (the cached path) costs
 * a Map lookup, and the same string each time, whose hash the Set has already computed.
 */
const articleOfUrl = new Map<string, string>();
const MAX_REMEMBERED_URLS = 10_000;

function articleOf(req: IncomingMessage): string | undefined {
  const url = req.url!;
  const known = articleOfUrl.get(url);
  if (known !== undefined) return known;
  try {
    const query = url.indexOf('?');
    let end = query === -1 ? url.length : query;
    if (url.charCodeAt(end - 1) === 47) end -= 1;
    const slug = decodeURIComponent(url.slice(ARTICLE_SLUG_AT, end));
    const { locale } = parseQuery(req, detailQuery);
    const article = `${locale} ${slug}`;
    if (articleOfUrl.size >= MAX_REMEMBERED_URLS) articleOfUrl.clear();
    articleOfUrl.set(url, article);
    return article;
  } catch {
    // A 200 was answered for this URL, so it parses; nothing to count otherwise.
    return undefined;
  }
}
