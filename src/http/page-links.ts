/*
 * The Link header of a paginated answer (RFC 8288), so a client pages by following links
 * instead of building URLs. Targets are path-absolute references (`/api/v1/articles?...`),
 * resolved against the request's own address, so they stay right behind any host name or
 * proxy that keeps the path. Every other query parameter is kept as the partner sent it;
 * only `page` changes.
 */

/** Where a page sits among its pages: attached to a list or search representation. */
export interface Paging {
  page: number;
  pages: number;
}

/** Builds the request's URL with another page; the query is parsed once per response. */
function pageUrls(url: string): (page: number) => string {
  const at = url.indexOf('?');
  const path = at === -1 ? url : url.slice(0, at);
  const params = new URLSearchParams(at === -1 ? '' : url.slice(at + 1));
  return (page) => {
    params.set('page', String(page));
    return `${path}?${params.toString()}`;
  };
}

/**
 * `rel="next"` while a later page has results, `rel="prev"` from page 2 on (pointing at the
 * last page when the request went past it), `first` and `last` when there is any page at all.
 * Undefined when there is nothing to link to.
 */
export function linkHeader(url: string, { page, pages }: Paging): string | undefined {
  if (pages === 0) return undefined;
  const pageUrl = pageUrls(url);
  const links: string[] = [];
  if (page < pages) links.push(`<${pageUrl(page + 1)}>; rel="next"`);
  if (page > 1) links.push(`<${pageUrl(Math.min(page - 1, pages))}>; rel="prev"`);
  links.push(`<${pageUrl(1)}>; rel="first"`);
  links.push(`<${pageUrl(pages)}>; rel="last"`);
  return links.join(', ');
}
