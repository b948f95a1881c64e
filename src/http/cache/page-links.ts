import { entryBytes, Lru } from '../../lib/lru.js';
/*
 * The Link header of a paginated answer (RFC 8288), so a client pages by following links
 * instead of building URLs. Targets are path-absolute references (`/api/v1/articles?...`, after
 * PUBLIC_BASE_URL's path when it has one: src/http/pipeline/base-path.ts),
 * resolved against the request's own address, so they stay right behind any host name or
 * proxy that keeps the path. The parameters the endpoint reads (its `linkParams`, derived from
 * its query schema in src/http/endpoints/routes-table.ts) are kept as the partner sent them and
 * only `page` changes; unknown ones (ignored by the API) are left out, so that a long junk query
 * string cannot make the header four times its size (past a client's header limit: the fuzz
 * suite found it).
 */

/** Past this size the header is left out: nothing a real client sends comes near it. */
const MAX_LINK_BYTES = 8 * 1024;

/** Where a page sits among its pages: attached to a list or search representation. */
export interface Paging {
  page: number;
  pages: number;
}

// An absolute-form request line (`GET http://host/api/v1/...`) names a host: never echoed.
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/** Builds the request's URL with another page; the query is parsed once per response. */
function pageUrls(requestUrl: string, kept: ReadonlySet<string>): (page: number) => string {
  const url = requestUrl.replace(ABSOLUTE_FORM, '') || '/';
  const at = url.indexOf('?');
  const path = at === -1 ? url : url.slice(0, at);
  const params = new URLSearchParams();
  for (const [name, value] of new URLSearchParams(at === -1 ? '' : url.slice(at + 1))) {
    if (kept.has(name)) params.append(name, value);
  }
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
// A repeated page repeats its URL and paging: each distinct header is built once.
const built = new Lru<string | null>(256 * 1024);
const MAX_REMEMBERED_URL = 512;

export function linkHeader(url: string, paging: Paging, kept: ReadonlySet<string>): string | undefined {
  if (url.length > MAX_REMEMBERED_URL) return buildLinkHeader(url, paging, kept);
  const key = `${paging.page}/${paging.pages} ${url}`;
  let header = built.get(key);
  if (header === undefined) {
    // One URL is one route, so the URL names the kept parameters too.
    header = buildLinkHeader(url, paging, kept) ?? null;
    built.set(key, header, entryBytes(key, (header?.length ?? 0) * 2));
  }
  return header ?? undefined;
}

function buildLinkHeader(url: string, { page, pages }: Paging, kept: ReadonlySet<string>): string | undefined {
  if (pages === 0) return undefined;
  const pageUrl = pageUrls(url, kept);
  const links: string[] = [];
  if (page < pages) links.push(`<${pageUrl(page + 1)}>; rel="next"`);
  if (page > 1) links.push(`<${pageUrl(Math.min(page - 1, pages))}>; rel="prev"`);
  links.push(`<${pageUrl(1)}>; rel="first"`);
  links.push(`<${pageUrl(pages)}>; rel="last"`);
  const header = links.join(', ');
  return Buffer.byteLength(header) > MAX_LINK_BYTES ? undefined : header;
}
