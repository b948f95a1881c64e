import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import type { Catalog } from '../../content/catalog.js';
import type { LocaleView } from '../../content/locale-view.js';
import type { StoreSession } from '../../db/snapshot/snapshot-store.js';
import type { Locale } from '../../locale.js';
import { parseQuery } from '../endpoints/parse-query.js';
import type { Route } from '../endpoints/routes-table.js';
import { assertLocaleAllowed, scopeKey, type KeyScope } from '../../keys/scope.js';

/*
 * How a cacheable endpoint names its response: the parsed query, the locale's view, and the
 * response-cache key, made of the endpoint's own part (every parsed parameter, derived from
 * its query schema by the routes table), the view's content tag and the path's slug. Shared by
 * the routes, which fill the cache, and the fast path (src/http/fast/fast-path.ts), which
 * serves from it: both must agree exactly, and neither writes a key by hand.
 * Throws what the route would answer (400 for a bad parameter, 403 for a locale outside the
 * key's scope, 503 for a store failure). A scoped key's answers are cached under its scope
 * (scopeKey): no cached answer reaches a key whose scope differs; unscoped keys share as before.
 */

export interface Resolved<Q> {
  q: Q;
  view: LocaleView;
  key: string;
}

type Req = Pick<IncomingMessage, 'url'>;

export function resolveCached<S extends z.ZodObject>(
  route: Route<string, S>,
  req: Req,
  session: StoreSession,
  catalog: Catalog,
  now: number,
  slug?: string,
  scope?: KeyScope | null,
): Resolved<z.output<S>> {
  const q = parseQuery(req, route.query);
  const locale = (q as { locale: Locale }).locale;
  assertLocaleAllowed(scope, locale);
  const view = catalog.view(session, locale);
  const own = route.cacheKey(q as object);
  const key = `${own}|${view.contentTag(now)}${slug === undefined ? '' : `|${slug}`}${scopeKey(scope)}`;
  return { q, view, key };
}
