import type { IncomingMessage } from 'node:http';
import type { Catalog } from '../../content/catalog.js';
import type { LocaleView } from '../../content/locale-view.js';
import type { StoreSession } from '../../db/snapshot/snapshot-store.js';
import { parseQuery } from '../pipeline/parse-query.js';
import { assertLocaleAllowed, scopeKey, type KeyScope } from '../../keys/scope.js';
import { categoriesQuery, changesQuery, detailQuery, listQuery, type ChangesQuery, type ListQuery } from '../contract/query-schemas.js';

/*
 * How each cacheable endpoint names its response: the parsed query, the locale's view, and
 * the response-cache key (request + content tag). Shared by the routes, which fill the cache,
 * and the fast path (src/http/fast/fast-path.ts), which serves from it: both must agree exactly.
 * Each throws what the route would answer (400 for a bad parameter, 403 for a locale outside
 * the key's scope, 503 for a store failure). A scoped key's answers are cached under its scope
 * (scopeKey): no cached answer reaches a key whose scope differs; unscoped keys share as before.
 */

interface Resolved<Q> {
  q: Q;
  view: LocaleView;
  key: string;
}

type Req = Pick<IncomingMessage, 'url'>;

export function resolveList(req: Req, session: StoreSession, catalog: Catalog, now: number, scope?: KeyScope | null): Resolved<ListQuery> {
  const q = parseQuery(req, listQuery);
  assertLocaleAllowed(scope, q.locale);
  const view = catalog.view(session, q.locale);
  const section = JSON.stringify(q.section ?? null);
  return { q, view, key: `list|${q.locale}|${q.page}|${q.limit}|${q.updated_since ?? ''}|${view.contentTag(now)}|${section}${scopeKey(scope)}` };
}

export function resolveDetail(req: Req, slug: string, session: StoreSession, catalog: Catalog, now: number, scope?: KeyScope | null) {
  const q = parseQuery(req, detailQuery);
  assertLocaleAllowed(scope, q.locale);
  const view = catalog.view(session, q.locale);
  return { q, view, key: `detail|${q.locale}|${view.contentTag(now)}|${slug}${scopeKey(scope)}` };
}

export function resolveCategories(req: Req, session: StoreSession, catalog: Catalog, now: number, scope?: KeyScope | null) {
  const q = parseQuery(req, categoriesQuery);
  assertLocaleAllowed(scope, q.locale);
  const view = catalog.view(session, q.locale);
  return { q, view, key: `categories|${q.locale}|${view.contentTag(now)}${scopeKey(scope)}` };
}

/**
 * The change feed moves with the locale's content version (each sync that changed something,
 * a prune) and with each scheduled publication: exactly what the content tag follows.
 */
export function resolveChanges(req: Req, session: StoreSession, catalog: Catalog, now: number, scope?: KeyScope | null): Resolved<ChangesQuery> {
  const q = parseQuery(req, changesQuery);
  assertLocaleAllowed(scope, q.locale);
  const view = catalog.view(session, q.locale);
  return { q, view, key: `changes|${q.locale}|${q.limit}|${view.contentTag(now)}|${JSON.stringify(q.since ?? null)}${scopeKey(scope)}` };
}
