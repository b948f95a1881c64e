import type { Catalog } from '../content/catalog.js';
import { hydrate } from '../content/articles.js';
import type { SnapshotStore } from '../db/snapshot/snapshot-store.js';
import { LOCALES, type Locale } from '../locale.js';
import { normalizeQuery } from '../search/normalize.js';
import { searchRepresentation } from './contract/search-representation.js';
import { parseQuery } from './endpoints/parse-query.js';
import { searchQuery } from './endpoints/query-schemas.js';

/*
 * Start-up warming of the API's own answers (src/app.ts calls it before the port opens): kept
 * out of the routes, which only answer requests.
 */

/**
 * How many times rehearseSearchResponses builds each of its responses (a different page of
 * hits each time). Once was not enough: V8 optimizes the highlighting code only after a few
 * hundred hits, and did it while answering the third to fifth partner search after a start
 * (33-80 ms of compiling on the one core the API had). Rehearsing one locale after the other
 * also compiled it for the first, threw that away on the second, and compiled it again later.
 * 12 rounds (960 hits) were not enough either: they took the highlighting code to V8's first
 * optimizing tier only, and its second (TurboFan, after about 3,000 calls of a function)
 * compiled bestWindow, hanTokenEnds and render while the first 200 partner searches were
 * answered, 10-18 ms each on the core they shared. 48 rounds (3,840 hits, about 0.5 s of the
 * start) leave about 70 ms of TurboFan compiling to those searches instead of 100-120 ms.
 */
export const RESPONSE_REHEARSAL_ROUNDS = 48;

/**
 * Builds search responses in-process, and drops them, before the port opens: the newest
 * articles as the hits of words of the newest one's title, from the query string parsed, page
 * after page, both locales in turn, and a query of both locales' words (a third way of finding
 * matches). The first searches after a start otherwise paid for compiling this code, for ICU
 * loading its word-break data (a first `激光` took 12 ms here, later ones 2-3 ms) and for V8
 * optimizing it (see RESPONSE_REHEARSAL_ROUNDS). Returns how many hits it highlighted. Quiet
 * when the snapshot or a locale is missing: a request will say so.
 */
export function rehearseSearchResponses(store: SnapshotStore, catalog: Catalog, now: number, rounds = RESPONSE_REHEARSAL_ROUNDS): number {
  const plans: { locale: Locale; words: string[] }[] = [];
  for (const locale of LOCALES) {
    try {
      const session = store.session();
      const [newest] = hydrate(session, catalog.view(session, locale).all.page(now, 1, 1).ids, now);
      const words = normalizeQuery(newest?.title ?? '').words.slice(0, 2);
      if (words.length > 0) plans.push({ locale, words });
    } catch {
      // Only a rehearsal: see above.
    }
  }
  // Latin and Chinese words together take the general tokenizing path; each alone its own.
  const mixed = plans.map((p) => p.words[0]!).join(' ');
  const asked = [...plans.map((p) => ({ locale: p.locale, q: p.words.join(' ') })), ...(plans.length > 1 ? plans.map((p) => ({ locale: p.locale, q: mixed })) : [])];
  let hits = 0;
  for (let round = 1; round <= rounds; round++) {
    for (const { locale, q: words } of asked) {
      try {
        const session = store.session();
        const articles = hydrate(session, catalog.view(session, locale).all.page(now, round, 20).ids, now);
        // Parsed as the route parses it: zod compiles a schema's parser on its first use, which
        // cost the first search 4 ms.
        const q = parseQuery({ url: `?locale=${locale}&q=${encodeURIComponent(words)}&highlight=true` }, searchQuery);
        searchRepresentation({ articles, total: articles.length }, q);
        hits += articles.length;
      } catch {
        // Only a rehearsal: see above.
      }
    }
  }
  return hits;
}
