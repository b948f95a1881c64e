/*
 * PUBLIC_BASE_URL's path (`/syndication` in `https://example.com/syndication` or in
 * `/syndication`): where partners reach the API. Behind a proxy that keeps that prefix the
 * API receives `/syndication/api/v1/...`; behind one that strips it, `/api/v1/...`. Both work
 * with the same setting: a request under the prefix is routed without it, and the URLs the API
 * writes itself (Link targets, the OpenAPI document's server) carry it, so they resolve for the
 * partner whichever proxy is in front.
 */

/** The path of PUBLIC_BASE_URL without its trailing slash: '' when the API is at the root. */
export function basePathOf(publicBaseUrl: string): string {
  const path = publicBaseUrl.startsWith('/') ? publicBaseUrl : new URL(publicBaseUrl).pathname;
  return path.replace(/\/+$/, '');
}

// The API's own top-level paths. A request already on one of them is routed as it is, so a
// prefix that looks like one of them (PUBLIC_BASE_URL=/api) cannot shadow the API behind a
// proxy that strips it.
const OWN_PATHS = /^\/(?:api\/v1|docs|health)(?:[/?]|$)/;

/**
 * Returns a request target without the base path when it starts with it (the proxy kept the
 * prefix), else the target unchanged (the proxy stripped it, or the request came straight to
 * the API, a health check say).
 */
export function stripBasePath(url: string, basePath: string): string {
  if (basePath === '' || !url.startsWith(basePath) || OWN_PATHS.test(url)) return url;
  const rest = url.slice(basePath.length);
  if (rest === '') return '/';
  if (rest.startsWith('?')) return `/${rest}`;
  return rest.startsWith('/') ? rest : url;
}
