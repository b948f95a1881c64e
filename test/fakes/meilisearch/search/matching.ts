/**
 * Which documents match which query terms, and how well (typos, exactness, attribute): the
 * inputs of the words / typo / attribute / exactness ranking rules.
 */
import type { IndexSettings } from '../settings.js';
import type { IndexState } from '../state.js';
import { isCjk, normalizeWord, tokenize, words, type QueryTerm, type TokenizerMode } from './tokenize.js';
import { leaves, valuesAtPath, type Doc } from '../values.js';

export interface AttrTokens {
  name: string;
  /** Position in searchableAttributes (or in the fields order for `["*"]`): lower ranks first. */
  rank: number;
  tokens: string[];
  /** Word positions, parallel to `tokens`; separate values (array items) are 8 apart, as in the engine. */
  positions: number[];
  /** In `typoTolerance.disableOnAttributes`: only typo-free matches count here. */
  exactOnly: boolean;
}

export interface DocEntry {
  id: string;
  doc: Doc;
  /** Internal id order: the final tie-breaker. */
  order: number;
  attrs: AttrTokens[];
}

export interface SearchData {
  entries: DocEntry[];
  /** word -> document -> attribute ranks the word occurs in. */
  vocab: Map<string, Map<DocEntry, number[]>>;
  /** `left\0right` -> documents where right directly follows left (milli's word pair proximity 1). */
  pairs: Map<string, Set<DocEntry>>;
}

/**
 * milli's MAX_POSITION_PER_ATTRIBUTE (`u16::MAX + 1`): words at or past this position of an
 * attribute are not indexed at all (`take_while` in the extractor), so they are unsearchable.
 */
export const MAX_POSITION_PER_ATTRIBUTE = 65_536;

/** Searchable attributes in rank order; `["*"]` follows the order fields were first seen. */
export function searchableAttributes(index: IndexState): string[] {
  const list = index.settings.searchableAttributes;
  return list.includes('*') ? [...index.fieldOrder] : list;
}

const cache = new WeakMap<IndexState, { generation: number; settings: IndexSettings; data: SearchData }>();

export function searchData(index: IndexState): SearchData {
  const mode = index.tokenizer;
  const hit = cache.get(index);
  if (hit && hit.generation === index.generation && hit.settings === index.settings) return hit.data;
  const attrNames = searchableAttributes(index);
  const disabled = index.settings.typoTolerance.disableOnAttributes;
  const entries: DocEntry[] = [];
  const vocab = new Map<string, Map<DocEntry, number[]>>();
  const pairs = new Map<string, Set<DocEntry>>();
  let order = 0;
  for (const [id, doc] of index.documents) {
    const attrs: AttrTokens[] = attrNames.map((name, rank) => {
      const texts = valuesAtPath(doc, name)
        .flatMap((v) => leaves(v))
        .filter((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
        .map(String);
      const tokens: string[] = [];
      const positions: number[] = [];
      // Each value continues the attribute's positions, 8 further (as after a hard separator).
      let next = 0;
      for (const text of texts) {
        let last = -1;
        for (const token of tokenize(text, mode)) {
          const position = next + token.position;
          if (position >= MAX_POSITION_PER_ATTRIBUTE) break;
          tokens.push(token.word);
          positions.push(position);
          last = position;
        }
        if (last >= 0) next = last + 8;
        if (next >= MAX_POSITION_PER_ATTRIBUTE) break;
      }
      return { name, rank, tokens, positions, exactOnly: disabled.some((d) => name === d || name.startsWith(`${d}.`)) };
    });
    const entry: DocEntry = { id, doc, order: order++, attrs };
    entries.push(entry);
    for (const attr of attrs) {
      for (const word of attr.tokens) {
        let docs = vocab.get(word);
        if (!docs) vocab.set(word, (docs = new Map()));
        const ranks = docs.get(entry);
        if (!ranks) docs.set(entry, [attr.rank]);
        else if (!ranks.includes(attr.rank)) ranks.push(attr.rank);
      }
      for (let k = 1; k < attr.tokens.length; k++) {
        if (attr.positions[k] !== (attr.positions[k - 1] as number) + 1) continue;
        const key = `${attr.tokens[k - 1]}\0${attr.tokens[k]}`;
        let docs = pairs.get(key);
        if (!docs) pairs.set(key, (docs = new Set()));
        docs.add(entry);
      }
    }
  }
  const data = { entries, vocab, pairs };
  cache.set(index, { generation: index.generation, settings: index.settings, data });
  return data;
}

export interface TermHit {
  typos: number;
  /** Matched a whole word without typo (not as a prefix). */
  exact: boolean;
  /** Best (lowest) attribute rank it matched in. */
  attr: number;
}

/** Optimal string alignment distance (Levenshtein with transpositions, as the engine's automata). */
function osa(a: string[], b: string[], prefix: boolean): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    const row = d[i] as number[];
    const prev = d[i - 1] as number[];
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, ((d[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = v;
    }
  }
  const last = d[a.length] as number[];
  // A prefix term may stop anywhere inside the document word.
  return prefix ? Math.min(...last) : (last[b.length] as number);
}

export interface TypoPolicy {
  enabled: boolean;
  oneTypo: number;
  twoTypos: number;
  disableOnWords: Set<string>;
  disableOnNumbers: boolean;
  prefixSearch: boolean;
}

export function typoPolicy(settings: IndexSettings): TypoPolicy {
  const t = settings.typoTolerance;
  return {
    enabled: t.enabled,
    oneTypo: t.minWordSizeForTypos.oneTypo,
    twoTypos: t.minWordSizeForTypos.twoTypos,
    disableOnWords: new Set(t.disableOnWords.map(normalizeWord)),
    disableOnNumbers: t.disableOnNumbers,
    prefixSearch: settings.prefixSearch !== 'disabled',
  };
}

/** How many typos a query word may carry: by its length in characters, never for CJK. */
export function typoBudget(word: string, policy: TypoPolicy): number {
  if (!policy.enabled || isCjk(word) || policy.disableOnWords.has(word)) return 0;
  if (policy.disableOnNumbers && /^\p{N}+$/u.test(word)) return 0;
  const len = [...word].length;
  return len >= policy.twoTypos ? 2 : len >= policy.oneTypo ? 1 : 0;
}

export interface WordMatch {
  typos: number;
  exact: boolean;
  /** Characters of the document word covered by the match (for highlighting prefixes). */
  length: number;
}

/**
 * Whether a document word matches a query word. Exact and prefix (last word only) matches cost
 * no typo; otherwise up to the budget in edits, where a different first letter is only
 * allowed one edit and counts as two typos (the engine's two-typo automaton). CJK words never
 * take typos, and like every other word they match a longer document word only as the query's
 * last word: milli builds prefix derivations for the last query term alone
 * (`search/new/query_term/parse_query.rs`), whatever its script. Chinese words are short
 * anyway: the re-cut indexes 激光器设备 as 激光 + 器 + 设备 and 激光雷达 as 激光 + 雷达, so
 * `激光 设备` finds the first and `雷达` the second (see tokenize.ts).
 */
export function matchWord(term: { word: string; prefix: boolean; cjk: boolean }, word: string, budget: number, policy: TypoPolicy): WordMatch | null {
  const t = term.word;
  if (word === t) return { typos: 0, exact: true, length: word.length };
  if (term.cjk) {
    return term.prefix && policy.prefixSearch && word.startsWith(t) ? { typos: 0, exact: false, length: t.length } : null;
  }
  const prefix = term.prefix && policy.prefixSearch;
  if (prefix && word.startsWith(t)) return { typos: 0, exact: false, length: t.length };
  if (budget === 0) return null;
  const a = [...t];
  const b = [...word];
  const firstDiffers = a[0] !== b[0];
  const maxEdits = budget === 2 && firstDiffers ? 1 : budget;
  if (!prefix && Math.abs(a.length - b.length) > maxEdits) return null;
  if (prefix && b.length < a.length - maxEdits) return null;
  const d = osa(a, b, prefix);
  if (d > maxEdits) return null;
  return { typos: budget === 2 && firstDiffers ? 2 : d, exact: false, length: word.length };
}

function better(a: TermHit | undefined, typos: number, exact: boolean, attr: number): TermHit {
  if (!a) return { typos, exact, attr };
  return { typos: Math.min(a.typos, typos), exact: a.exact || exact, attr: Math.min(a.attr, attr) };
}

/** Documents matched by one query word, with their best typo count, exactness and attribute. */
export interface TermMatches {
  hits: Map<DocEntry, TermHit>;
  /** Document words this term matched, with their typo count (for positions). */
  words: Map<string, number>;
  /** Word sequences (phrase, multi-word synonyms) this term matched. */
  phrases: string[][];
}

export function wordHits(
  term: { word: string; prefix: boolean; cjk: boolean },
  data: SearchData,
  policy: TypoPolicy,
  allowed: (rank: number) => boolean,
  synonyms: string[][] = [],
  splitWords = true,
): TermMatches {
  const out = new Map<DocEntry, TermHit>();
  const matchedWords = new Map<string, number>();
  const budget = typoBudget(term.word, policy);
  for (const [word, docs] of data.vocab) {
    const m = matchWord(term, word, budget, policy);
    if (!m) continue;
    matchedWords.set(word, m.typos);
    for (const [entry, ranks] of docs) {
      for (const rank of ranks) {
        if (!allowed(rank)) continue;
        if (m.typos > 0 && entry.attrs[rank]?.exactOnly) continue;
        out.set(entry, better(out.get(entry), m.typos, m.exact, rank));
      }
    }
  }
  // Synonyms match as whole words (or phrases for multi-word synonyms), typo-free.
  for (const syn of synonyms) {
    for (const [entry, hit] of phraseHits(syn, data.entries, allowed).hits) out.set(entry, better(out.get(entry), 0, false, hit.attr));
  }
  // Split words: the query word as two adjacent indexed words, counted as one typo, whatever
  // the typo settings (milli `find_split_words`, a one-typo derivation computed even when typos
  // are off): `5g` finds 采用5G技术, indexed 采用 / 5 / g / 技术.
  const split = splitWords ? splitBestFrequency(term.word, data) : undefined;
  const phrases = [...synonyms];
  if (split) {
    phrases.push(split);
    for (const [entry, hit] of phraseHits(split, data.pairs.get(split.join('\0')) ?? [], allowed).hits) {
      out.set(entry, better(out.get(entry), 1, false, hit.attr));
    }
  }
  return { hits: out, words: matchedWords, phrases };
}

/**
 * milli's `split_best_frequency`: of every cut of the word in two, the one whose halves are
 * adjacent in the most documents (the first such cut on a tie); none when no cut is.
 */
export function splitBestFrequency(word: string, data: SearchData): [string, string] | undefined {
  const chars = [...word];
  let best: { frequency: number; split: [string, string] } | undefined;
  for (let i = 1; i < chars.length; i++) {
    const left = chars.slice(0, i).join('');
    const right = chars.slice(i).join('');
    const frequency = data.pairs.get(`${left}\0${right}`)?.size ?? 0;
    if (frequency > 0 && (!best || frequency > best.frequency)) best = { frequency, split: [left, right] };
  }
  return best?.split;
}

/** Documents containing the words consecutively in one attribute, exactly. */
export function phraseHits(phrase: string[], entries: Iterable<DocEntry>, allowed: (rank: number) => boolean): TermMatches {
  const out = new Map<DocEntry, TermHit>();
  for (const entry of entries) {
    for (const attr of entry.attrs) {
      if (!allowed(attr.rank)) continue;
      if (phraseStarts(attr, phrase).length > 0) out.set(entry, better(out.get(entry), 0, true, attr.rank));
    }
  }
  return { hits: out, words: new Map(), phrases: [phrase] };
}

/** Token indexes where the phrase starts, its words adjacent (not spanning two values). */
function phraseStarts(attr: AttrTokens, phrase: string[]): number[] {
  const starts: number[] = [];
  const { tokens, positions } = attr;
  for (let i = 0; i + phrase.length <= tokens.length; i++) {
    if (phrase.every((w, k) => tokens[i + k] === w && positions[i + k] === (positions[i] as number) + k)) starts.push(i);
  }
  return starts;
}

export interface Occurrence {
  attr: number;
  start: number;
  end: number;
}

/** Where a term occurs in a document, for the proximity and word-position rules. */
export function occurrences(term: TermMatches, entry: DocEntry, allowed: (rank: number) => boolean): Occurrence[] {
  const out: Occurrence[] = [];
  for (const attr of entry.attrs) {
    if (!allowed(attr.rank)) continue;
    attr.tokens.forEach((word, k) => {
      const typos = term.words.get(word);
      if (typos === undefined || (typos > 0 && attr.exactOnly)) return;
      out.push({ attr: attr.rank, start: attr.positions[k] as number, end: attr.positions[k] as number });
    });
    for (const phrase of term.phrases) {
      for (const i of phraseStarts(attr, phrase)) {
        out.push({ attr: attr.rank, start: attr.positions[i] as number, end: attr.positions[i + phrase.length - 1] as number });
      }
    }
  }
  return out;
}

/**
 * Proximity cost between two consecutive query terms, as milli counts it: the distance in
 * words when in the same attribute (one more when in reverse order), at most 7, and 8 when
 * they never share an attribute.
 */
export function pairProximity(a: Occurrence[], b: Occurrence[]): number {
  let best = 8;
  for (const x of a) {
    for (const y of b) {
      if (x.attr !== y.attr) continue;
      const d = y.start > x.end ? y.start - x.end : x.start - y.end + 1;
      best = Math.min(best, Math.min(Math.max(d, 1), 7));
      if (best === 1) return 1;
    }
  }
  return best;
}

export function termHits(
  term: QueryTerm,
  data: SearchData,
  settings: IndexSettings,
  policy: TypoPolicy,
  allowed: (rank: number) => boolean,
  mode?: TokenizerMode,
): TermMatches {
  if (term.kind === 'phrase') return phraseHits(term.words, data.entries, allowed);
  const synonyms: string[][] = [];
  for (const [key, values] of Object.entries(settings.synonyms)) {
    if (words(key, mode).join(' ') !== term.word) continue;
    for (const value of values) {
      const syn = words(value, mode);
      if (syn.length > 0) synonyms.push(syn);
    }
  }
  return wordHits(term, data, policy, allowed, synonyms);
}

/** Words of `text` that match any query word, as [start, end) offsets, for highlighting. */
export function matchedSpans(text: string, terms: QueryTerm[], policy: TypoPolicy, mode?: TokenizerMode): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  const toks = tokenize(text, mode);
  toks.forEach((tok, i) => {
    for (const term of terms) {
      if (term.kind === 'phrase') {
        if (term.words.every((w, k) => toks[i + k]?.word === w)) {
          spans.push({ start: tok.start, end: (toks[i + term.words.length - 1] as { end: number }).end });
          return;
        }
        continue;
      }
      const m = matchWord(term, tok.word, typoBudget(term.word, policy), policy);
      if (m) {
        // A prefix match highlights the matched beginning only (`<em>las</em>er`).
        const end = m.exact || m.typos > 0 ? tok.end : tok.start + [...tok.word].slice(0, [...term.word].length).join('').length;
        spans.push({ start: tok.start, end: Math.min(end, tok.end) });
        return;
      }
    }
  });
  return spans;
}
