import type { Locale } from '../../src/locale.js';
import type { Article, ChangesBody } from '../support/feed-harness.js';

/*
 * What the scope suites share: requests with a given key, the catalogue as that key's list
 * shows it, and a partner's mirror kept from the feed with that key (as docs/partners.md says).
 */

export interface Keyed {
  url: string;
  key: string;
}

export async function getJson<T = unknown>(k: Keyed, path: string): Promise<{ status: number; body: T; headers: Headers }> {
  const res = await fetch(`${k.url}${path}`, { headers: { 'X-API-Key': k.key } });
  return { status: res.status, body: (await res.json()) as T, headers: res.headers };
}

/** Every article the key's list shows in the locale, by slug, page by page. */
export async function listed(k: Keyed, locale: Locale, extra = ''): Promise<Map<string, Article>> {
  const all = new Map<string, Article>();
  for (let page = 1; ; page++) {
    const { status, body } = await getJson<{ data: Article[]; meta: { pages: number; total: number } }>(
      k,
      `/api/v1/articles?locale=${locale}&limit=50&page=${page}${extra}`,
    );
    if (status !== 200) throw new Error(`list answered ${status}: ${JSON.stringify(body)}`);
    for (const article of body.data) all.set(article.slug, article);
    if (page >= body.meta.pages) return all;
  }
}

export class KeyMirror {
  readonly articles = new Map<string, Article>();
  cursor: string | undefined;

  constructor(
    private readonly k: Keyed,
    readonly locale: Locale,
    private readonly limit = 3,
  ) {}

  async follow(): Promise<number> {
    for (let pages = 1; pages < 500; pages++) {
      if (!(await this.readPage())) return pages;
    }
    throw new Error('the feed never ended');
  }

  async readPage(): Promise<boolean> {
    const params = new URLSearchParams({ locale: this.locale, limit: String(this.limit) });
    if (this.cursor !== undefined) params.set('since', this.cursor);
    const { status, body } = await getJson<ChangesBody>(this.k, `/api/v1/changes?${params}`);
    if (status !== 200) throw new Error(`changes answered ${status}: ${JSON.stringify(body)}`);
    if (body.data.length > this.limit) throw new Error(`a page of ${body.data.length} changes for limit ${this.limit}`);
    const slugs = body.data.map((c) => c.slug);
    if (new Set(slugs).size !== slugs.length) throw new Error(`a page repeats a slug: ${slugs.join(', ')}`);
    for (const change of body.data) {
      if (change.type === 'upsert') this.articles.set(change.slug, change.article!);
      else this.articles.delete(change.slug);
    }
    this.cursor = body.meta.next;
    return body.meta.has_more;
  }
}
