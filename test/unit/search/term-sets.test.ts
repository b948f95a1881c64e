import { describe, expect, it } from 'vitest';
import { IdSet, intersect } from '../../../src/search/sqlite/term-sets.js';
import { mulberry32 } from '../../support/random.js';

/** Ascending distinct ids below `max`, each kept with probability `density`. */
function draw(next: () => number, max: number, density: number): Int32Array {
  const ids: number[] = [];
  for (let id = 1; id < max; id++) if (next() < density) ids.push(id);
  return Int32Array.from(ids);
}

describe('IdSet and intersect', () => {
  it('has() is false past the end of a list or a bitmap, and true exactly for its ids', () => {
    const sparse = IdSet.of(Int32Array.from([3, 70, 900]));
    const dense = IdSet.of(Int32Array.from([1, 2, 3, 5, 8, 13, 21, 34]));
    expect(sparse.bitmap).toBeUndefined();
    expect(dense.bitmap).toBeDefined();
    for (const set of [sparse, dense]) {
      const ids = new Set(Array.from(set.toArray()));
      for (let id = 0; id < 2_000; id++) expect(set.has(id)).toBe(ids.has(id));
      expect(set.has(1_000_000)).toBe(false);
    }
    expect(IdSet.of(new Int32Array(0)).has(0)).toBe(false);
  });

  it('gives the ids common to every set, for lists, bitmaps of different lengths and mixes of both', () => {
    const next = mulberry32(38);
    for (let round = 0; round < 200; round++) {
      const count = 2 + Math.floor(next() * 3);
      // Sets of their own lengths (a bitmap ends at its highest id) and densities on both sides
      // of the list/bitmap line (one id in 32).
      const drawn = Array.from({ length: count }, () => draw(next, 64 + Math.floor(next() * 4_000), next() < 0.5 ? 0.01 : 0.2 + next() * 0.7));
      const expected = Array.from(drawn[0]!).filter((id) => drawn.every((ids) => ids.includes(id)));
      const sets = drawn.map((ids) => IdSet.of(ids));
      expect(Array.from(intersect(sets)), `round ${round}`).toEqual(expected);
    }
  });
});
