/**
 * Which keys were asked for recently, in bounded memory: a cache that asks it before keeping an
 * entry keeps an answer on its second request, not its first (TinyLFU's "doorkeeper"; CDNs call
 * it caching on the second hit). Answers asked for once (never-repeated searches, distinct
 * unknown sections, a crawler's walk through the pages) then never push out answers that repeat,
 * and never hold memory of their own (decision 0076).
 *
 * Keys are held as 32-bit hashes in two generations of at most `capacity` each: when the newer
 * one is full it becomes the older and the older is dropped, so a key is remembered for at
 * least `capacity` and at most twice as many distinct keys after it. A hash collision only lets
 * an answer in on its first request, which is what every answer did before.
 */
export class Doorkeeper {
  private newer = new Set<number>();
  private older = new Set<number>();

  constructor(private readonly capacity = 16_384) {}

  /** True when `key` was offered before (and is remembered again); false the first time. */
  admit(key: string): boolean {
    const hash = fnv1a(key);
    if (this.newer.has(hash)) return true;
    const known = this.older.has(hash);
    if (this.newer.size >= this.capacity) {
      this.older = this.newer;
      this.newer = new Set();
    }
    this.newer.add(hash);
    return known;
  }
}

/** FNV-1a over UTF-16 code units: cheap, and spread well enough for a filter that may err. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
