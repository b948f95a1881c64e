/** `POST /indexes/{uid}/search`: matching strategy, ranking rules, pagination, facets. */
import { badRequest, notImplemented } from '../errors.js';
import { checkFilterable, evaluate, parseFilter } from './filter.js';
import { decorateHit, selectAttributes, type FormatOptions } from './format.js';
import {
  occurrences,
  pairProximity,
  phraseHits,
  searchableAttributes,
  searchData,
  termHits,
  typoPolicy,
  wordHits,
  type DocEntry,
  type TermHit,
  type Occurrence,
  type TermMatches,
} from './matching.js';
import { parseSearchParams, type SearchParams } from './search-params.js';
import { filterRules } from '../settings.js';
import type { IndexState } from '../state.js';
import { CURRENT_MODE, parseQuery, words, type QueryTerm, type TokenizerMode } from './tokenize.js';
import { matchesPattern, valuesAtPath, type Doc } from '../values.js';

interface SortKey {
  attr: string;
  desc: boolean;
}

function parseSort(entries: string[], index: IndexState): SortKey[] {
  const keys = entries.map((entry) => {
    if (entry.startsWith('_geoPoint(')) throw notImplemented('geo sorting');
    const m = /^(.+):(asc|desc)$/.exec(entry);
    if (!m) {
      throw badRequest('invalid_search_sort', `Invalid syntax for the sort parameter: expected expression ending by \`:asc\` or \`:desc\`, found \`${entry}\`.`);
    }
    return { attr: m[1] as string, desc: m[2] === 'desc' };
  });
  if (keys.length > 0 && !index.settings.rankingRules.includes('sort')) {
    throw badRequest(
      'invalid_search_sort',
      `Index \`${index.uid}\`: You must specify where \`sort\` is listed in the rankingRules setting to use the sort parameter at search time.`,
    );
  }
  const sortable = index.settings.sortableAttributes;
  for (const { attr } of keys) {
    if (!sortable.some((p) => matchesPattern(attr, p))) {
      const available = sortable.length === 0 ? 'This index does not have configured sortable attributes.' : `Available sortable attributes are: \`${sortable.join(', ')}\`.`;
      throw badRequest('invalid_search_sort', `Index \`${index.uid}\`: Attribute \`${attr}\` is not sortable. ${available}`);
    }
  }
  return keys;
}

type SortValue = { kind: 0; n: number } | { kind: 1; s: string } | { kind: 2 };

/**
 * The engine sorts numbers before strings, in either direction, and documents without a value
 * last; an array sorts by its smallest value ascending, its largest descending.
 */
function sortValue(doc: Doc, key: SortKey): SortValue {
  const values = valuesAtPath(doc, key.attr);
  const nums = values.filter((v): v is number => typeof v === 'number');
  if (nums.length > 0) return { kind: 0, n: key.desc ? Math.max(...nums) : Math.min(...nums) };
  const strs = values.filter((v) => typeof v === 'string' || typeof v === 'boolean').map((v) => String(v).trim().toLowerCase());
  if (strs.length > 0) return { kind: 1, s: strs.reduce((a, b) => ((key.desc ? b > a : b < a) ? b : a)) };
  return { kind: 2 };
}

function compareSortValues(a: SortValue, b: SortValue, desc: boolean): number {
  if (a.kind !== b.kind) return a.kind - b.kind;
  if (a.kind === 0 && b.kind === 0) return desc ? b.n - a.n : a.n - b.n;
  if (a.kind === 1 && b.kind === 1) return a.s === b.s ? 0 : (a.s < b.s) !== desc ? -1 : 1;
  return 0;
}

interface Ranked {
  entry: DocEntry;
  words: number;
  typos: number;
  proximity: number;
  attr: number;
  /** Earliest word position of a match inside the best attribute. */
  position: number;
  exactAttr: boolean;
  exactCount: number;
}

/**
 * Applies the matching strategy: `all` keeps documents matching every term; `last` keeps those
 * matching the first term and scores them by how many leading terms they match (terms are
 * dropped from the end); `frequency` drops the most common terms first. This is the engine's
 * universe, so counts include every bucket, not only the best one.
 */
function match(
  terms: QueryTerm[],
  matches: TermMatches[],
  strategy: SearchParams['matchingStrategy'],
  universe: DocEntry[],
  allowed: (rank: number) => boolean,
): Ranked[] {
  const n = terms.length;
  const hits = (i: number): Map<DocEntry, TermHit> => (matches[i] as TermMatches).hits;
  let removal: number[];
  if (strategy === 'all') removal = [];
  else if (strategy === 'last') removal = terms.map((_, i) => n - 1 - i).slice(0, n - 1);
  else {
    const byFrequency = terms.map((_, i) => i).sort((a, b) => hits(b).size - hits(a).size || b - a);
    removal = byFrequency.slice(0, n - 1);
  }
  const out: Ranked[] = [];
  const queryWords = terms.flatMap((t) => (t.kind === 'phrase' ? t.words : [t.word]));
  for (const entry of universe) {
    const kept = new Set(terms.map((_, i) => i));
    let removed = 0;
    while ([...kept].some((i) => !hits(i).has(entry))) {
      const next = removal[removed];
      if (next === undefined) break;
      kept.delete(next);
      removed++;
    }
    if ([...kept].some((i) => !hits(i).has(entry))) continue;
    let typos = 0;
    let attr = Number.MAX_SAFE_INTEGER;
    let exactCount = 0;
    for (const i of kept) {
      const h = hits(i).get(entry) as TermHit;
      typos += h.typos;
      attr = Math.min(attr, h.attr);
      if (h.exact) exactCount++;
    }
    const keptInOrder = [...kept].sort((a, b) => a - b);
    const occ: Occurrence[][] = keptInOrder.map((i) => occurrences(matches[i] as TermMatches, entry, allowed));
    let proximity = 0;
    for (let k = 1; k < occ.length; k++) proximity += pairProximity(occ[k - 1] as Occurrence[], occ[k] as Occurrence[]);
    let position = Number.MAX_SAFE_INTEGER;
    for (const list of occ) for (const o of list) if (o.attr === attr) position = Math.min(position, o.start);
    // An attribute equal to the whole query ranks first in exactness, as in the engine.
    const exactAttr = entry.attrs.some((a) => a.tokens.length === queryWords.length && a.tokens.every((w, k) => w === queryWords[k]));
    out.push({ entry, words: n - removed, typos, proximity, attr, position, exactAttr, exactCount });
  }
  return out;
}

type Comparator = (a: Ranked, b: Ranked) => number;

function rankingComparator(rules: string[], sortKeys: SortKey[], placeholder: boolean): Comparator {
  const steps: Comparator[] = [];
  for (const rule of rules) {
    if (rule === 'sort') {
      for (const key of sortKeys) steps.push((a, b) => compareSortValues(sortValue(a.entry.doc, key), sortValue(b.entry.doc, key), key.desc));
      continue;
    }
    const custom = /^(.+):(asc|desc)$/.exec(rule);
    if (custom) {
      const key = { attr: custom[1] as string, desc: custom[2] === 'desc' };
      steps.push((a, b) => compareSortValues(sortValue(a.entry.doc, key), sortValue(b.entry.doc, key), key.desc));
      continue;
    }
    // Query-dependent rules do nothing for a placeholder search.
    if (placeholder) continue;
    if (rule === 'words') steps.push((a, b) => b.words - a.words);
    else if (rule === 'typo') steps.push((a, b) => a.typos - b.typos);
    else if (rule === 'proximity') steps.push((a, b) => a.proximity - b.proximity);
    // `attribute` is the older single rule that newer versions split in two.
    else if (rule === 'attribute') steps.push((a, b) => a.attr - b.attr || a.position - b.position);
    else if (rule === 'attributeRank') steps.push((a, b) => a.attr - b.attr);
    else if (rule === 'wordPosition') steps.push((a, b) => a.position - b.position);
    else if (rule === 'exactness') steps.push((a, b) => Number(b.exactAttr) - Number(a.exactAttr) || b.exactCount - a.exactCount);
  }
  return (a, b) => {
    for (const step of steps) {
      const c = step(a, b);
      if (c !== 0) return c;
    }
    return a.entry.order - b.entry.order;
  };
}

function facetKey(v: unknown): string | null {
  if (typeof v === 'string') return v.trim().toLowerCase();
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return null;
}

function facetResults(facets: string[], ranked: Ranked[], index: IndexState): { distribution: Record<string, Record<string, number>>; stats: Record<string, { min: number; max: number }> } {
  const rules = filterRules(index.settings);
  const patterns = rules.flatMap((r) => r.patterns);
  let attrs: string[];
  if (facets.includes('*')) {
    attrs = index.fieldOrder.filter((f) => patterns.some((p) => matchesPattern(f, p)));
  } else {
    for (const f of facets) {
      if (!patterns.some((p) => matchesPattern(f, p))) {
        const sorted = [...new Set(patterns)].sort();
        throw badRequest(
          'invalid_search_facets',
          sorted.length === 0
            ? `Invalid facet distribution: Attribute \`${f}\` is not filterable. This index does not have configured filterable attributes.`
            : `Invalid facet distribution: Attribute \`${f}\` is not filterable. Available filterable attributes patterns are: \`${sorted.join(', ')}\`.`,
        );
      }
    }
    attrs = facets;
  }
  const distribution: Record<string, Record<string, number>> = {};
  const stats: Record<string, { min: number; max: number }> = {};
  const { maxValuesPerFacet, sortFacetValuesBy } = index.settings.faceting;
  for (const attr of attrs) {
    const counts = new Map<string, { label: string; count: number }>();
    let min = Infinity;
    let max = -Infinity;
    for (const r of ranked) {
      const seen = new Set<string>();
      for (const v of valuesAtPath(r.entry.doc, attr)) {
        const key = facetKey(v);
        if (key === null || seen.has(key)) continue;
        seen.add(key);
        if (typeof v === 'number') {
          min = Math.min(min, v);
          max = Math.max(max, v);
        }
        const slot = counts.get(key);
        if (slot) slot.count++;
        else counts.set(key, { label: typeof v === 'string' ? v : String(v), count: 1 });
      }
    }
    const byCount = (sortFacetValuesBy[attr] ?? sortFacetValuesBy['*'] ?? 'alpha') === 'count';
    const entries = [...counts.entries()].sort(([ka, a], [kb, b]) => (byCount ? b.count - a.count : 0) || (ka < kb ? -1 : ka > kb ? 1 : 0));
    distribution[attr] = Object.fromEntries(entries.slice(0, maxValuesPerFacet).map(([, v]) => [v.label, v.count]));
    if (min !== Infinity) stats[attr] = { min, max };
  }
  return { distribution, stats };
}

/** Runs one search against an index; throws MeiliError for what the engine answers with a 400. */
export function runSearch(index: IndexState, body: unknown, mode: TokenizerMode = CURRENT_MODE, degraded = false): Record<string, unknown> {
  const started = performance.now();
  const p = parseSearchParams(body);
  const filter = parseFilter(p.filter);
  if (filter) checkFilterable(filter, index.settings, index.uid);
  const sortKeys = parseSort(p.sort ?? [], index);
  const settings = index.settings;
  const searchable = searchableAttributes(index);

  let allowed = (_rank: number): boolean => true;
  if (p.attributesToSearchOn && !p.attributesToSearchOn.includes('*')) {
    for (const attr of p.attributesToSearchOn) {
      if (!settings.searchableAttributes.includes('*') && !searchable.includes(attr)) {
        throw badRequest(
          'invalid_search_attributes_to_search_on',
          `Index \`${index.uid}\`: Attribute \`${attr}\` is not searchable. Available searchable attributes are: \`${searchable.join(', ')}\`.`,
        );
      }
    }
    const ranks = new Set(p.attributesToSearchOn.map((a) => searchable.indexOf(a)).filter((r) => r >= 0));
    allowed = (rank) => ranks.has(rank);
  }

  const distinctAttr = p.distinct ?? settings.distinctAttribute;
  if (p.distinct !== null && !filterRules(settings).some((r) => r.patterns.some((pat) => matchesPattern(p.distinct as string, pat)))) {
    throw badRequest(
      'invalid_search_distinct',
      `Index \`${index.uid}\`: Attribute \`${p.distinct}\` is not filterable and thus, cannot be used as distinct attribute. Available filterable attributes patterns are: \`${filterRules(settings).flatMap((r) => r.patterns).join(', ')}\`.`,
    );
  }

  const data = searchData(index);
  const universe = filter ? data.entries.filter((e) => evaluate(filter, e.doc)) : data.entries;
  const policy = typoPolicy(settings);
  const query = parseQuery(p.q ?? '', mode);
  const stopWords = new Set(settings.stopWords.flatMap((w) => words(w, mode)));
  // Stop words are dropped from the query; a query of stop words only becomes a placeholder search.
  const terms = query.terms.filter((t) => t.kind === 'phrase' || !stopWords.has(t.word));

  const excluded = new Set<DocEntry>();
  for (const neg of query.negatives) {
    const docs = neg.length === 1 ? wordHits({ word: neg[0] as string, prefix: false, cjk: false }, data, { ...policy, enabled: false }, () => true, [], false) : phraseHits(neg, data.entries, () => true);
    for (const entry of docs.hits.keys()) excluded.add(entry);
  }
  const candidates = universe.filter((e) => !excluded.has(e));

  let ranked: Ranked[];
  if (terms.length === 0) {
    ranked = candidates.map((entry) => ({ entry, words: 0, typos: 0, proximity: 0, attr: 0, position: 0, exactAttr: false, exactCount: 0 }));
  } else {
    const matches = terms.map((t) => termHits(t, data, settings, policy, allowed, mode));
    ranked = match(terms, matches, p.matchingStrategy, candidates, allowed);
  }
  ranked.sort(rankingComparator(settings.rankingRules, sortKeys, terms.length === 0));
  // Past the search cutoff the engine returns what matched so far without ranking it.
  if (degraded) ranked.sort((a, b) => a.entry.order - b.entry.order);

  if (distinctAttr) {
    const seen = new Set<string>();
    ranked = ranked.filter((r) => {
      const values = valuesAtPath(r.entry.doc, distinctAttr).map(facetKey).filter((k): k is string => k !== null);
      if (values.length === 0) return true;
      if (values.some((v) => seen.has(v))) return false;
      for (const v of values) seen.add(v);
      return true;
    });
  }

  // Pagination exactly as the engine computes it, maxTotalHits capping both pages and counts.
  const maxTotalHits = settings.pagination.maxTotalHits;
  const finite = p.page !== null || p.hitsPerPage !== null;
  let offset: number;
  let limit: number;
  if (finite) {
    const perPage = Math.min(p.hitsPerPage ?? 20, maxTotalHits);
    const page = p.page ?? 1;
    [offset, limit] = page === 0 ? [0, 0] : [perPage * (page - 1), perPage];
  } else {
    [offset, limit] = [p.offset, p.limit];
  }
  offset = Math.min(offset, maxTotalHits);
  limit = Math.min(limit, Math.max(0, maxTotalHits - offset));
  const numberOfHits = Math.min(ranked.length, maxTotalHits);

  const displayedList = settings.displayedAttributes;
  const retrieve = p.attributesToRetrieve ?? ['*'];
  const wantFormatted = (p.attributesToHighlight?.length ?? 0) > 0 || (p.attributesToCrop?.length ?? 0) > 0;
  const formatOptions: FormatOptions = {
    highlight: new Set(p.attributesToHighlight ?? []),
    crop: new Map(
      (p.attributesToCrop ?? []).map((a) => {
        const m = /^(.*):(\d+)$/.exec(a);
        return m ? [m[1] as string, Number(m[2])] : [a, p.cropLength];
      }),
    ),
    cropMarker: p.cropMarker,
    preTag: p.highlightPreTag,
    postTag: p.highlightPostTag,
    showMatchesPosition: p.showMatchesPosition,
    terms,
    policy,
  };
  const hits = ranked.slice(offset, offset + limit).map((r) => {
    const displayed = selectAttributes(r.entry.doc, displayedList);
    const hit = selectAttributes(displayed, retrieve);
    return wantFormatted || p.showMatchesPosition ? decorateHit(hit, displayed, formatOptions, wantFormatted) : hit;
  });

  const response: Record<string, unknown> = { hits, query: p.q ?? '', processingTimeMs: Math.round(performance.now() - started) };
  if (finite) {
    const perPage = p.hitsPerPage ?? 20;
    response['hitsPerPage'] = perPage;
    response['page'] = p.page ?? 1;
    response['totalPages'] = perPage === 0 ? 0 : Math.ceil(numberOfHits / perPage);
    response['totalHits'] = numberOfHits;
  } else {
    response['limit'] = p.limit;
    response['offset'] = offset;
    response['estimatedTotalHits'] = numberOfHits;
  }
  // Serialized only when true (`skip_serializing_if = "Not::not"`).
  if (degraded) response['degraded'] = true;
  if (p.facets) {
    const { distribution, stats } = facetResults(p.facets, ranked, index);
    response['facetDistribution'] = distribution;
    response['facetStats'] = stats;
  }
  return response;
}
