/**
 * Meilisearch's filter language: parser (mirroring the grammar of the engine's `filter-parser`
 * crate: uppercase keywords, bare words of letters/digits/`_-.`, quoted values with `\`
 * escapes, NOT > AND > OR) and evaluator (mirroring milli's facet semantics).
 */
import { badRequest, MeiliError, notImplemented } from '../errors.js';
import { filterRules, type IndexSettings } from '../settings.js';
import { isPlainObject, matchesPattern, valuesAtPath, hasPath, rawValuesAtPath, type Doc } from '../values.js';

export type CmpOp = '=' | '!=' | '>' | '>=' | '<' | '<=';

export type FilterNode =
  | { kind: 'and'; nodes: FilterNode[] }
  | { kind: 'or'; nodes: FilterNode[] }
  | { kind: 'not'; node: FilterNode }
  | { kind: 'cmp'; attr: Attr; op: CmpOp; value: string }
  | { kind: 'to'; attr: Attr; from: string; to: string }
  | { kind: 'in'; attr: Attr; values: string[] }
  | { kind: 'exists' | 'null' | 'empty'; attr: Attr };

/** An attribute as written, with its position for error messages. */
interface Attr {
  name: string;
  start: number;
  end: number;
}

interface Tok {
  t: 'word' | 'quoted' | 'op' | 'punct';
  v: string;
  start: number;
  end: number;
}

const KEYWORDS = new Set(['AND', 'OR', 'IN', 'NOT', 'TO', 'EXISTS', 'IS', 'NULL', 'EMPTY', 'CONTAINS', 'STARTS', 'WITH', '_geoRadius', '_geoBoundingBox']);
const OPERATIONS =
  '`=`, `!=`, `>=`, `>`, `<=`, `<`, `IN`, `NOT IN`, `TO`, `EXISTS`, `NOT EXISTS`, `IS NULL`, `IS NOT NULL`, `IS EMPTY`, `IS NOT EMPTY`, `CONTAINS`, `NOT CONTAINS`, `STARTS WITH`, `NOT STARTS WITH`, `_geoRadius`, or `_geoBoundingBox`';

class FilterSyntaxError extends Error {
  constructor(
    message: string,
    readonly start: number,
    readonly end: number,
  ) {
    super(message);
  }
}

const isWordChar = (c: string): boolean => /[\p{L}\p{N}_.-]/u.test(c);

function lex(input: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i] as string;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      let value = '';
      while (j < input.length && input[j] !== c) {
        if (input[j] === '\\' && j + 1 < input.length) {
          const next = input[j + 1] as string;
          // The engine unescapes the quote itself and the usual escape sequences.
          value += next === 'n' ? '\n' : next === 't' ? '\t' : next === 'r' ? '\r' : next;
          j += 2;
          continue;
        }
        value += input[j];
        j++;
      }
      if (j >= input.length) throw new FilterSyntaxError(`Expression \`${input.slice(i)}\` is missing the following closing delimiter: \`${c}\`.`, i, input.length);
      toks.push({ t: 'quoted', v: value, start: i, end: j + 1 });
      i = j + 1;
      continue;
    }
    const two = input.slice(i, i + 2);
    if (two === '!=' || two === '>=' || two === '<=') {
      toks.push({ t: 'op', v: two, start: i, end: i + 2 });
      i += 2;
      continue;
    }
    if (c === '=' || c === '>' || c === '<') {
      toks.push({ t: 'op', v: c, start: i, end: i + 1 });
      i++;
      continue;
    }
    if (c === '(' || c === ')' || c === '[' || c === ']' || c === ',') {
      toks.push({ t: 'punct', v: c, start: i, end: i + 1 });
      i++;
      continue;
    }
    if (isWordChar(c)) {
      let j = i;
      while (j < input.length && isWordChar(input[j] as string)) j++;
      toks.push({ t: 'word', v: input.slice(i, j), start: i, end: j });
      i = j;
      continue;
    }
    let j = i;
    while (j < input.length && !/[\s()=<>!]/.test(input[j] as string)) j++;
    throw new FilterSyntaxError(`Was expecting a value but instead got \`${input.slice(i, Math.max(j, i + 1))}\`.`, i, Math.max(j, i + 1));
  }
  return toks;
}

class Parser {
  private i = 0;
  constructor(
    private readonly toks: Tok[],
    private readonly input: string,
  ) {}

  private peek(offset = 0): Tok | undefined {
    return this.toks[this.i + offset];
  }
  private isKw(tok: Tok | undefined, kw: string): boolean {
    return tok !== undefined && tok.t === 'word' && tok.v === kw;
  }
  private fail(message: string, tok?: Tok): never {
    const start = tok?.start ?? this.input.length;
    throw new FilterSyntaxError(message, start, tok?.end ?? this.input.length);
  }

  parse(): FilterNode {
    const node = this.or();
    const extra = this.peek();
    if (extra !== undefined) this.fail(`Found unexpected characters at the end of the filter: \`${this.input.slice(extra.start)}\`. You probably forgot an \`OR\` or an \`AND\` rule.`, extra);
    return node;
  }

  private or(): FilterNode {
    const nodes = [this.and()];
    while (this.isKw(this.peek(), 'OR')) {
      this.i++;
      nodes.push(this.and());
    }
    return nodes.length === 1 ? (nodes[0] as FilterNode) : { kind: 'or', nodes };
  }

  private and(): FilterNode {
    const nodes = [this.not()];
    while (this.isKw(this.peek(), 'AND')) {
      this.i++;
      nodes.push(this.not());
    }
    return nodes.length === 1 ? (nodes[0] as FilterNode) : { kind: 'and', nodes };
  }

  private not(): FilterNode {
    if (this.isKw(this.peek(), 'NOT')) {
      this.i++;
      const inner = this.not();
      return inner.kind === 'not' ? inner.node : { kind: 'not', node: inner };
    }
    return this.primary();
  }

  private primary(): FilterNode {
    const tok = this.peek();
    if (tok === undefined) this.fail('Was expecting a value but instead got nothing.');
    if (tok.t === 'punct' && tok.v === '(') {
      this.i++;
      const inner = this.or();
      const close = this.peek();
      if (close === undefined || close.v !== ')') this.fail(`Expression \`${this.input.slice(tok.start)}\` is missing the following closing delimiter: \`)\`.`, tok);
      this.i++;
      return inner;
    }
    if (tok.t === 'word' && (tok.v === '_geoRadius' || tok.v === '_geoBoundingBox' || tok.v === '_geoPolygon')) {
      throw notImplemented(`the \`${tok.v}\` geo filter`);
    }
    const attr = this.value('Was expecting a value');
    const next = this.peek();
    const a: Attr = { name: attr.v, start: attr.start, end: attr.end };
    if (next === undefined) this.fail(`Was expecting an operation ${OPERATIONS} at \`${this.input.slice(attr.start, attr.end)}\`.`, attr);
    if (next.t === 'op') {
      this.i++;
      const value = this.value('Was expecting a value');
      return { kind: 'cmp', attr: a, op: next.v as CmpOp, value: value.v };
    }
    if (this.isKw(next, 'IN')) {
      this.i++;
      return { kind: 'in', attr: a, values: this.list() };
    }
    if (this.isKw(next, 'EXISTS')) {
      this.i++;
      return { kind: 'exists', attr: a };
    }
    if (this.isKw(next, 'IS')) {
      this.i++;
      const negate = this.isKw(this.peek(), 'NOT');
      if (negate) this.i++;
      const what = this.peek();
      let node: FilterNode;
      if (this.isKw(what, 'NULL')) node = { kind: 'null', attr: a };
      else if (this.isKw(what, 'EMPTY')) node = { kind: 'empty', attr: a };
      else this.fail(`Was expecting an operation ${OPERATIONS} at \`${this.input.slice(attr.start)}\`.`, what);
      this.i++;
      return negate ? { kind: 'not', node } : node;
    }
    if (this.isKw(next, 'NOT')) {
      const after = this.peek(1);
      if (this.isKw(after, 'IN')) {
        this.i += 2;
        return { kind: 'not', node: { kind: 'in', attr: a, values: this.list() } };
      }
      if (this.isKw(after, 'EXISTS')) {
        this.i += 2;
        return { kind: 'not', node: { kind: 'exists', attr: a } };
      }
      if (this.isKw(after, 'CONTAINS') || this.isKw(after, 'STARTS')) this.containsNotEnabled(after as Tok);
    }
    if (this.isKw(next, 'CONTAINS') || this.isKw(next, 'STARTS')) this.containsNotEnabled(next);
    if (next.t === 'word' || next.t === 'quoted') {
      const from = this.value('Was expecting a value');
      if (this.isKw(this.peek(), 'TO')) {
        this.i++;
        const to = this.value('Was expecting a value');
        return { kind: 'to', attr: a, from: from.v, to: to.v };
      }
    }
    return this.fail(`Was expecting an operation ${OPERATIONS} at \`${this.input.slice(attr.start)}\`.`, attr);
  }

  private containsNotEnabled(tok: Tok): never {
    // CONTAINS / STARTS WITH sit behind the `containsFilter` experimental feature, off by default.
    throw new MeiliError(
      400,
      'feature_not_enabled',
      `Using \`${tok.v === 'STARTS' ? 'STARTS WITH' : 'CONTAINS'}\` in a filter requires enabling the \`contains filter\` experimental feature. See https://github.com/orgs/meilisearch/discussions/763`,
    );
  }

  private value(expecting: string): Tok {
    const tok = this.peek();
    if (tok === undefined) this.fail(`${expecting} but instead got nothing.`);
    if (tok.t === 'quoted' || (tok.t === 'word' && !KEYWORDS.has(tok.v))) {
      this.i++;
      return tok;
    }
    if (tok.t === 'word') {
      this.fail(`${expecting} but instead got the reserved keyword \`${tok.v}\`. Quote it to use it as a value.`, tok);
    }
    return this.fail(`${expecting} but instead got \`${tok.v}\`.`, tok);
  }

  private list(): string[] {
    const open = this.peek();
    if (open === undefined || open.v !== '[') this.fail('Expected `[` after `IN` keyword.', open);
    this.i++;
    const values: string[] = [];
    while (this.peek() !== undefined && this.peek()?.v !== ']') {
      values.push(this.value('Expected only comma-separated field names inside `IN[..]`').v);
      if (this.peek()?.v === ',') this.i++;
      else break;
    }
    const close = this.peek();
    if (close === undefined || close.v !== ']') this.fail('Expected matching `]` after the list of field names given to `IN[`', close);
    this.i++;
    return values;
  }
}

function parseOne(expr: string, code: string): FilterNode | null {
  if (expr.trim() === '') return null;
  try {
    return new Parser(lex(expr), expr).parse();
  } catch (err) {
    if (err instanceof FilterSyntaxError) throw badRequest(code, `${err.message}\n${err.start + 1}:${err.end + 1} ${expr}`);
    throw err;
  }
}

/**
 * Parses the `filter` parameter: a string, or an array whose strings are ANDed and whose
 * nested arrays of strings are ORed. Returns null when there is nothing to filter on.
 */
export function parseFilter(filter: unknown, code = 'invalid_search_filter'): FilterNode | null {
  if (filter === undefined || filter === null) return null;
  if (typeof filter === 'string') return parseOne(filter, code);
  if (!Array.isArray(filter)) {
    throw badRequest(code, `Invalid syntax for the filter parameter: \`expected String, Array, found: ${JSON.stringify(filter)}\`.`);
  }
  const ands: FilterNode[] = [];
  for (const item of filter) {
    if (typeof item === 'string') {
      const node = parseOne(item, code);
      if (node) ands.push(node);
    } else if (Array.isArray(item)) {
      const ors: FilterNode[] = [];
      for (const inner of item) {
        if (typeof inner !== 'string') {
          throw badRequest(code, `Invalid syntax for the filter parameter: \`expected String, found: ${JSON.stringify(inner)}\`.`);
        }
        const node = parseOne(inner, code);
        if (node) ors.push(node);
      }
      if (ors.length === 1) ands.push(ors[0] as FilterNode);
      else if (ors.length > 1) ands.push({ kind: 'or', nodes: ors });
    } else {
      throw badRequest(code, `Invalid syntax for the filter parameter: \`expected String, [String], found: ${JSON.stringify(item)}\`.`);
    }
  }
  if (ands.length === 0) return null;
  return ands.length === 1 ? (ands[0] as FilterNode) : { kind: 'and', nodes: ands };
}

function* conditions(node: FilterNode): Generator<Exclude<FilterNode, { kind: 'and' | 'or' | 'not' }>> {
  if (node.kind === 'and' || node.kind === 'or') for (const n of node.nodes) yield* conditions(n);
  else if (node.kind === 'not') yield* conditions(node.node);
  else yield node;
}

/**
 * The engine refuses a filter naming an attribute outside `filterableAttributes` (or using a
 * comparison a granular rule forbids), with the same 400 code as a syntax error.
 */
export function checkFilterable(node: FilterNode, settings: IndexSettings, indexUid: string, code = 'invalid_search_filter'): void {
  const rules = filterRules(settings);
  for (const cond of conditions(node)) {
    const name = cond.attr.name;
    const ruleIndex = rules.findIndex((r) => r.patterns.some((p) => matchesPattern(name, p)));
    const rule = rules[ruleIndex];
    if (rule === undefined) {
      const patterns = [...new Set(rules.flatMap((r) => r.patterns))].sort();
      const available =
        patterns.length === 0
          ? ' This index does not have configured filterable attributes.'
          : ` Available filterable attribute patterns are: ${patterns.map((p) => `\`${p}\``).join(', ')}.`;
      throw badRequest(code, `Index \`${indexUid}\`: Attribute \`${name}\` is not filterable.${available}\n${cond.attr.start + 1}:${cond.attr.end + 1} ${name}`);
    }
    const comparison = cond.kind === 'to' || (cond.kind === 'cmp' && cond.op !== '=' && cond.op !== '!=');
    const equality = cond.kind === 'in' || (cond.kind === 'cmp' && (cond.op === '=' || cond.op === '!='));
    if ((comparison && !rule.comparison) || (equality && !rule.equality)) {
      const op = cond.kind === 'cmp' ? cond.op : cond.kind === 'to' ? 'TO' : 'IN';
      throw badRequest(
        code,
        `Index \`${indexUid}\`: Filter operator \`${op}\` is not allowed for the attribute \`${name}\`.\n  - Note: field \`${name}\` matched rule #${ruleIndex} in \`filterableAttributes\``,
      );
    }
  }
}

// Facet strings are compared trimmed and lowercased, numbers as f64: milli's facet databases.
const normalizeFacet = (s: string): string => s.trim().toLowerCase();

function parseNumber(s: string): number | null {
  const t = s.trim();
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}

/** Strings a facet value is indexed under (booleans are indexed as "true"/"false"). */
function facetString(v: unknown): string | null {
  if (typeof v === 'string') return normalizeFacet(v);
  if (typeof v === 'boolean') return String(v);
  return null;
}

function equals(v: unknown, value: string): boolean {
  if (typeof v === 'number') return parseNumber(value) === v;
  const s = facetString(v);
  return s !== null && s === normalizeFacet(value);
}

function inRange(v: unknown, lo: { v: string; incl: boolean } | null, hi: { v: string; incl: boolean } | null): boolean {
  if (typeof v === 'number') {
    const l = lo ? parseNumber(lo.v) : null;
    const h = hi ? parseNumber(hi.v) : null;
    // A bound that is not a number selects no number at all, as the engine's number range is skipped.
    if ((lo && l === null) || (hi && h === null)) return false;
    if (l !== null && (lo?.incl ? v < l : v <= l)) return false;
    if (h !== null && (hi?.incl ? v > h : v >= h)) return false;
    return true;
  }
  // Strings compare against the raw bound, as milli's string range does (normalized side only).
  const s = facetString(v);
  if (s === null) return false;
  if (lo && (lo.incl ? s < lo.v : s <= lo.v)) return false;
  if (hi && (hi.incl ? s > hi.v : s >= hi.v)) return false;
  return true;
}

export function evaluate(node: FilterNode, doc: Doc): boolean {
  switch (node.kind) {
    case 'and':
      return node.nodes.every((n) => evaluate(n, doc));
    case 'or':
      return node.nodes.some((n) => evaluate(n, doc));
    case 'not':
      return !evaluate(node.node, doc);
    case 'exists':
      return hasPath(doc, node.attr.name);
    case 'null':
      return rawValuesAtPath(doc, node.attr.name).some((v) => v === null);
    case 'empty':
      return rawValuesAtPath(doc, node.attr.name).some(
        (v) => v === '' || (Array.isArray(v) && v.length === 0) || (isPlainObject(v) && Object.keys(v).length === 0),
      );
    case 'in':
      return valuesAtPath(doc, node.attr.name).some((v) => node.values.some((value) => equals(v, value)));
    case 'to':
      return valuesAtPath(doc, node.attr.name).some((v) => inRange(v, { v: node.from, incl: true }, { v: node.to, incl: true }));
    case 'cmp': {
      const values = valuesAtPath(doc, node.attr.name);
      switch (node.op) {
        case '=':
          return values.some((v) => equals(v, node.value));
        case '!=':
          return !values.some((v) => equals(v, node.value));
        case '>':
          return values.some((v) => inRange(v, { v: node.value, incl: false }, null));
        case '>=':
          return values.some((v) => inRange(v, { v: node.value, incl: true }, null));
        case '<':
          return values.some((v) => inRange(v, null, { v: node.value, incl: false }));
        case '<=':
          return values.some((v) => inRange(v, null, { v: node.value, incl: true }));
      }
    }
  }
}
