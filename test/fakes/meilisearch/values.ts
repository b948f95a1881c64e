export type Doc = Record<string, unknown>;

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Every leaf value found at a dotted path, arrays flattened, the way the engine reads nested
 * fields for filters, sorts and search (`author.name` reaches into `{author: {name}}` and into
 * `{author: [{name}, {name}]}`).
 */
export function valuesAtPath(doc: unknown, path: string): unknown[] {
  const out: unknown[] = [];
  collect(doc, path.split('.'), 0, out);
  return out;
}

function collect(node: unknown, parts: string[], i: number, out: unknown[]): void {
  if (Array.isArray(node)) {
    for (const item of node) collect(item, parts, i, out);
    return;
  }
  if (i === parts.length) {
    out.push(node);
    return;
  }
  if (!isPlainObject(node)) return;
  // A key may itself contain dots (`{"a.b": 1}`), which the engine also reaches with `a.b`.
  for (let j = parts.length; j > i; j--) {
    const key = parts.slice(i, j).join('.');
    if (Object.hasOwn(node, key)) collect(node[key], parts, j, out);
  }
}

/** Values at a dotted path without flattening the final value (so `[]` and `{}` stay visible), for `IS EMPTY`. */
export function rawValuesAtPath(doc: unknown, path: string): unknown[] {
  const out: unknown[] = [];
  const walk = (node: unknown, parts: string[], i: number): void => {
    if (i === parts.length) {
      out.push(node);
      return;
    }
    if (Array.isArray(node)) {
      for (const item of node) walk(item, parts, i);
      return;
    }
    if (!isPlainObject(node)) return;
    for (let j = parts.length; j > i; j--) {
      const key = parts.slice(i, j).join('.');
      if (Object.hasOwn(node, key)) walk(node[key], parts, j);
    }
  };
  walk(doc, path.split('.'), 0);
  return out;
}

/** Whether a field exists at the path at all (even with a null value), for `EXISTS`. */
export function hasPath(doc: unknown, path: string): boolean {
  const found: unknown[] = [];
  collectPresence(doc, path.split('.'), 0, found);
  return found.length > 0;
}

function collectPresence(node: unknown, parts: string[], i: number, out: unknown[]): void {
  if (i === parts.length) {
    out.push(true);
    return;
  }
  if (Array.isArray(node)) {
    for (const item of node) collectPresence(item, parts, i, out);
    return;
  }
  if (!isPlainObject(node)) return;
  for (let j = parts.length; j > i; j--) {
    const key = parts.slice(i, j).join('.');
    if (Object.hasOwn(node, key)) collectPresence(node[key], parts, j, out);
  }
}

/** Leaf scalars under a value (arrays and objects walked), in document order. */
export function leaves(value: unknown, out: unknown[] = []): unknown[] {
  if (Array.isArray(value)) for (const v of value) leaves(v, out);
  else if (isPlainObject(value)) for (const v of Object.values(value)) leaves(v, out);
  else out.push(value);
  return out;
}

/**
 * `attr` is covered by `pattern` when equal, when `attr` is nested under it (`author.name`
 * under `author`), or when a `*` wildcard at either end matches, as the engine's attribute
 * patterns do.
 */
export function matchesPattern(attr: string, pattern: string): boolean {
  if (pattern === '*' || pattern === attr) return true;
  if (attr.startsWith(`${pattern}.`)) return true;
  const starts = pattern.startsWith('*');
  const ends = pattern.endsWith('*');
  const core = pattern.slice(starts ? 1 : 0, ends ? -1 : undefined);
  if (starts && ends) return attr.includes(core);
  if (starts) return attr.endsWith(core);
  if (ends) return attr.startsWith(core);
  return false;
}

/** Index uids: integer or [a-zA-Z0-9_-], at most 512 bytes. */
export function isValidIndexUid(uid: unknown): uid is string {
  return typeof uid === 'string' && /^[a-zA-Z0-9_-]+$/.test(uid) && Buffer.byteLength(uid) <= 512;
}

export function invalidIndexUidMessage(uid: unknown): string {
  return `\`${String(uid)}\` is not a valid index uid. Index uid can be an integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.`;
}

/**
 * RFC 3339 with nanosecond digits like the engine prints them (`2024-08-08T09:01:13.348471Z`
 * style, up to 9 digits, trailing zeros trimmed). Sub-millisecond digits come from a counter
 * so timestamps stay strictly increasing and comparable as instants.
 */
let lastMs = 0;
let subMs = 0;
export interface Instant {
  ms: number;
  /** Nanoseconds past `ms` (0..999_999); keeps order inside one millisecond. */
  ns: number;
  text: string;
}

export function now(): Instant {
  let ms = Date.now();
  if (ms <= lastMs) {
    ms = lastMs;
    subMs += 1_000;
  } else {
    lastMs = ms;
    subMs = 1_000;
  }
  const ns = subMs % 1_000_000;
  return { ms, ns, text: rfc3339(ms, ns) };
}

export function rfc3339(ms: number, ns = 0): string {
  const iso = new Date(ms).toISOString(); // 2024-01-01T00:00:00.123Z
  const fraction = `${iso.slice(20, 23)}${String(ns).padStart(6, '0')}`.replace(/0+$/, '');
  return `${iso.slice(0, 19)}${fraction === '' ? '' : `.${fraction}`}Z`;
}

/** Compares two instants; negative when `a` is earlier. */
export const compareInstants = (a: Instant, b: Instant): number => a.ms - b.ms || a.ns - b.ns;

/** ISO 8601 duration as the engine prints task durations (`PT0.004523S`). */
export function isoDuration(from: Instant, to: Instant): string {
  const totalNs = (to.ms - from.ms) * 1_000_000 + (to.ns - from.ns);
  const seconds = Math.max(0, totalNs) / 1e9;
  return `PT${seconds.toFixed(9).replace(/\.?0+$/, '')}S`;
}

export const deepClone = <T>(value: T): T => structuredClone(value);
