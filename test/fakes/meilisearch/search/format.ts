/** Shaping hits: displayed/retrieved attributes, `_formatted` (highlight, crop), `_matchesPosition`. */
import { matchedSpans, type TypoPolicy } from './matching.js';
import type { QueryTerm } from './tokenize.js';
import { tokenize } from './tokenize.js';
import { isPlainObject, type Doc } from '../values.js';

/**
 * Keeps the attributes listed (dotted paths reach into objects and arrays of objects), in the
 * document's own key order; `*` keeps everything. Mirrors permissive_json_pointer::select_values.
 */
export function selectAttributes(doc: Doc, attrs: readonly string[]): Doc {
  if (attrs.includes('*')) return structuredClone(doc);
  return selectIn(doc, attrs, '') as Doc;
}

function selectIn(node: Record<string, unknown>, attrs: readonly string[], base: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    const path = base === '' ? key : `${base}.${key}`;
    if (attrs.includes(path)) {
      out[key] = structuredClone(value);
      continue;
    }
    if (!attrs.some((a) => a.startsWith(`${path}.`))) continue;
    if (isPlainObject(value)) {
      const sub = selectIn(value, attrs, path);
      if (Object.keys(sub).length > 0) out[key] = sub;
    } else if (Array.isArray(value)) {
      const items = value.filter(isPlainObject).map((v) => selectIn(v, attrs, path)).filter((v) => Object.keys(v).length > 0);
      if (items.length > 0) out[key] = items;
    }
  }
  return out;
}

export interface FormatOptions {
  highlight: Set<string>;
  /** attribute -> crop length in words. */
  crop: Map<string, number>;
  cropMarker: string;
  preTag: string;
  postTag: string;
  showMatchesPosition: boolean;
  terms: QueryTerm[];
  policy: TypoPolicy;
}

const covers = (attrs: Iterable<string>, path: string): boolean => {
  for (const a of attrs) if (a === '*' || a === path || path.startsWith(`${a}.`)) return true;
  return false;
};

function highlight(text: string, spans: { start: number; end: number }[], pre: string, post: string): string {
  let out = '';
  let at = 0;
  for (const s of spans) {
    out += text.slice(at, s.start) + pre + text.slice(s.start, s.end) + post;
    at = s.end;
  }
  return out + text.slice(at);
}

/**
 * Crops to `length` words around the first match (or from the start when nothing matched),
 * with the marker where text was cut, then highlights inside the window.
 */
function crop(text: string, length: number, opts: FormatOptions, doHighlight: boolean): string {
  const toks = tokenize(text);
  const spans = matchedSpans(text, opts.terms, opts.policy);
  if (toks.length <= length) return doHighlight ? highlight(text, spans, opts.preTag, opts.postTag) : text;
  const first = spans[0] ? toks.findIndex((t) => t.start >= (spans[0] as { start: number }).start) : 0;
  const startTok = Math.max(0, Math.min(first - Math.floor((length - 1) / 2), toks.length - length));
  const endTok = startTok + length - 1;
  const from = startTok === 0 ? 0 : (toks[startTok] as { start: number }).start;
  const to = endTok >= toks.length - 1 ? text.length : (toks[endTok] as { end: number }).end;
  const window = text.slice(from, to);
  const inner = spans.filter((s) => s.start >= from && s.end <= to).map((s) => ({ start: s.start - from, end: s.end - from }));
  const body = doHighlight ? highlight(window, inner, opts.preTag, opts.postTag) : window;
  return `${from > 0 ? opts.cropMarker : ''}${body}${to < text.length ? opts.cropMarker : ''}`;
}

function formatValue(value: unknown, path: string, opts: FormatOptions, matches: Record<string, { start: number; length: number }[]>): unknown {
  if (Array.isArray(value)) return value.map((v) => formatValue(v, path, { ...opts, crop: new Map() }, matches));
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, formatValue(v, `${path}.${k}`, { ...opts, crop: new Map() }, matches)]));
  }
  if (typeof value !== 'string' && typeof value !== 'number') return value;
  const text = String(value);
  const spans = matchedSpans(text, opts.terms, opts.policy);
  if (opts.showMatchesPosition && spans.length > 0) {
    // Positions are in bytes, as the engine reports them.
    (matches[path] ??= []).push(
      ...spans.map((s) => ({ start: Buffer.byteLength(text.slice(0, s.start)), length: Buffer.byteLength(text.slice(s.start, s.end)) })),
    );
  }
  const doHighlight = covers(opts.highlight, path);
  let cropLength: number | undefined;
  for (const [attr, len] of opts.crop) if (covers([attr], path)) cropLength = len;
  if (cropLength !== undefined) return crop(text, cropLength, opts, doHighlight);
  if (doHighlight) return highlight(text, spans, opts.preTag, opts.postTag);
  return value;
}

/** Adds `_formatted` and `_matchesPosition` to a hit when asked, like the engine. */
export function decorateHit(hit: Doc, displayed: Doc, opts: FormatOptions, wantFormatted: boolean): Doc {
  const matches: Record<string, { start: number; length: number }[]> = {};
  const formatted: Doc = {};
  for (const [key, value] of Object.entries(displayed)) {
    const v = formatValue(value, key, opts, matches);
    if (wantFormatted && (Object.hasOwn(hit, key) || covers(opts.highlight, key) || covers(opts.crop.keys(), key))) formatted[key] = v;
  }
  const out: Doc = { ...hit };
  if (wantFormatted) out['_formatted'] = formatted;
  if (opts.showMatchesPosition) out['_matchesPosition'] = matches;
  return out;
}
