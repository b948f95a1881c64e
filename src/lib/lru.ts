/**
 * A least-recently-used map bounded by a total weight in bytes. Callers weigh each entry with
 * its key and its fixed overhead counted (see entryBytes), so that many small entries cannot
 * outgrow the budget. Map iteration order is insertion order: re-inserting on read keeps the
 * newest last, and eviction starts from the first.
 */
export class Lru<V> {
  private readonly entries = new Map<string, { value: V; weight: number }>();
  private weight = 0;
  private hits = 0;
  private misses = 0;

  constructor(readonly maxWeight: number) {}

  /** `countMiss` false: a caller that will look again on a miss, which counts it then. */
  get(key: string, countMiss = true): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) {
      if (countMiss) this.misses += 1;
      return undefined;
    }
    this.hits += 1;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, weight: number): void {
    const previous = this.entries.get(key);
    if (previous) {
      this.weight -= previous.weight;
      this.entries.delete(key);
    }
    if (weight > this.maxWeight) return;
    this.entries.set(key, { value, weight });
    this.weight += weight;
    for (const [oldest, entry] of this.entries) {
      if (this.weight <= this.maxWeight) break;
      this.entries.delete(oldest);
      this.weight -= entry.weight;
    }
  }

  clear(): void {
    this.entries.clear();
    this.weight = 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** For metrics: lookups that hit and missed, bytes held, entries held. */
  stats(): { hits: number; misses: number; bytes: number; entries: number } {
    return { hits: this.hits, misses: this.misses, bytes: this.weight, entries: this.entries.size };
  }
}

/**
 * What one entry costs beyond its value, measured on Node 20 (V8): the Map slot, the entry
 * object, and for a Buffer value its own ArrayBuffer and backing store. Rounded up.
 */
export const ENTRY_OVERHEAD_BYTES = 320;

/** The weight of an entry: its value's bytes, its key (two bytes a character at most), the overhead. */
export function entryBytes(key: string, valueBytes: number): number {
  return valueBytes + 2 * key.length + ENTRY_OVERHEAD_BYTES;
}
