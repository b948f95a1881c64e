/*
 * A strict reader of the Prometheus text exposition format (version 0.0.4), enough to check
 * what a scrape returns: every line is a comment (# HELP / # TYPE) or a sample, every sample
 * belongs to a family with a TYPE, and label values are unescaped.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
  /** The value of the one sample matching name and labels (a subset), or undefined. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** Sum over the samples matching name and labels. */
  sum(name: string, labels?: Record<string, string>): number;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: (-?\\d+))?$`);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const typeLine = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (typeLine) {
        if (!TYPES.has(typeLine[2]!)) throw new Error(`unknown metric type: ${line}`);
        types.set(typeLine[1]!, typeLine[2]!);
      } else if (!/^# HELP \S+ /.test(line)) throw new Error(`not a HELP or TYPE comment: ${line}`);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    if (m[2]) {
      LABEL.lastIndex = 0;
      let consumed = 0;
      for (let l = LABEL.exec(m[2]); l; l = LABEL.exec(m[2])) {
        labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
        consumed = LABEL.lastIndex;
      }
      if (consumed !== m[2].length) throw new Error(`bad labels: ${line}`);
    }
    const raw = m[3]!;
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    if (Number.isNaN(value) && raw !== 'NaN') throw new Error(`bad value: ${line}`);
    const family = m[1]!.replace(/_(bucket|sum|count)$/, '');
    if (!types.has(m[1]!) && !types.has(family)) throw new Error(`sample without a TYPE: ${line}`);
    samples.push({ name: m[1]!, labels, value });
  }
  const matching = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return {
    types,
    samples,
    value(name, labels) {
      const found = matching(name, labels);
      if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
      return found[0]?.value;
    },
    sum: (name, labels) => matching(name, labels).reduce((total, s) => total + s.value, 0),
  };
}

export async function scrape(baseUrl: string): Promise<Exposition> {
  const res = await fetch(`${baseUrl}/metrics`);
  if (res.status !== 200) throw new Error(`scrape answered ${res.status}`);
  if (!res.headers.get('content-type')?.startsWith('text/plain; version=0.0.4')) {
    throw new Error(`unexpected content type ${res.headers.get('content-type')}`);
  }
  return parseExposition(await res.text());
}
