/*
 * `fields`: an item with `slug` plus exactly the named fields. The names arrive parsed
 * (src/http/endpoints/query-schemas.ts): allowed on the endpoint, each once, in the usual order,
 * so copying them in that order gives the usual order. Without `fields` the item is returned
 * as it is, and the answer is byte for byte what it was before `fields` existed.
 */

export function pick<T extends { slug: string }>(item: T, fields: readonly string[] | undefined): T {
  if (fields === undefined) return item;
  const out: Record<string, unknown> = { slug: item.slug };
  const from = item as unknown as Record<string, unknown>;
  for (const name of fields) if (name !== 'slug') out[name] = from[name];
  return out as T;
}
