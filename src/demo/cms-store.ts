import { isLocale, type Locale } from '../locale.js';
import { parseIsoToMs } from '../lib/time.js';

/** Records exactly as the CMS contract sends them (snake_case; see docs/specs/cms-contract.md). */
export interface RawImage {
  url: string;
  alt: string;
  credit: string;
  credit_url: string;
  source_url: string;
}

export interface RawSection {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  active: boolean;
  position: number;
  updated_at: string;
}

export interface RawArticle {
  id: string;
  locale: Locale;
  slug: string;
  status: string;
  title: string;
  excerpt: string;
  body_markdown: string;
  section_slug: string | null;
  author: string | null;
  image: RawImage | null;
  published_at: string | null;
  updated_at: string;
  url: string;
}

export interface ArticleQuery {
  locale: Locale;
  /** 1-based. */
  page: number;
  perPage: number;
  publishedOnly?: boolean;
  /** Epoch ms; articles of any status changed at or after it. */
  updatedSinceMs?: number;
}

interface Entry {
  raw: RawArticle;
  updatedMs: number;
}

// The sorted views are rebuilt lazily: a bulk load or a burst of test mutations sorts once.
class LocaleArticles {
  readonly byId = new Map<string, Entry>();
  private sorted: Entry[] | null = null;
  private published: Entry[] | null = null;

  invalidate(): void {
    this.sorted = null;
    this.published = null;
  }

  view(publishedOnly: boolean): Entry[] {
    if (!this.sorted) {
      this.sorted = [...this.byId.values()].sort(
        (a, b) => a.updatedMs - b.updatedMs || (a.raw.id < b.raw.id ? -1 : a.raw.id > b.raw.id ? 1 : 0),
      );
    }
    if (!publishedOnly) return this.sorted;
    this.published ??= this.sorted.filter((e) => e.raw.status === 'published');
    return this.published;
  }
}

/**
 * The demo CMS's content: contract-shaped records per locale, listed oldest change first
 * (updated_at as an instant, then id) like the contract says. Records are copied in, and the
 * ones handed out must not be mutated: upsert a changed copy instead.
 */
export class CmsStore {
  private readonly articles: Record<Locale, LocaleArticles> = { en: new LocaleArticles(), zh: new LocaleArticles() };
  private readonly localeOf = new Map<string, Locale>();
  private readonly sections: Record<Locale, Map<string, RawSection>> = { en: new Map(), zh: new Map() };

  /** Adds or replaces an article by id; throws on a record the store cannot order. */
  upsertArticle(raw: RawArticle): void {
    if (typeof raw.id !== 'string' || raw.id === '') throw new Error('article needs a string id');
    if (!isLocale(raw.locale)) throw new Error(`article ${raw.id}: unknown locale ${String(raw.locale)}`);
    const updatedMs = parseIsoToMs(raw.updated_at);
    if (updatedMs === undefined) throw new Error(`article ${raw.id}: updated_at is not ISO 8601 with offset`);
    const previous = this.localeOf.get(raw.id);
    if (previous !== undefined && previous !== raw.locale) this.removeArticle(raw.id);
    const copy: RawArticle = { ...raw, image: raw.image ? { ...raw.image } : null };
    this.articles[raw.locale].byId.set(raw.id, { raw: copy, updatedMs });
    this.articles[raw.locale].invalidate();
    this.localeOf.set(raw.id, raw.locale);
  }

  upsertArticles(raws: Iterable<RawArticle>): void {
    for (const raw of raws) this.upsertArticle(raw);
  }

  /** Deletes an article: it stops appearing in every listing. Returns whether it existed. */
  removeArticle(id: string): boolean {
    const locale = this.localeOf.get(id);
    if (locale === undefined) return false;
    this.articles[locale].byId.delete(id);
    this.articles[locale].invalidate();
    this.localeOf.delete(id);
    return true;
  }

  getArticle(id: string): RawArticle | undefined {
    const locale = this.localeOf.get(id);
    const entry = locale === undefined ? undefined : this.articles[locale].byId.get(id);
    return entry && { ...entry.raw, image: entry.raw.image ? { ...entry.raw.image } : null };
  }

  articleCount(locale: Locale): number {
    return this.articles[locale].byId.size;
  }

  /** Sections carry no locale in the contract, so it is given here. */
  upsertSection(locale: Locale, raw: RawSection): void {
    if (parseIsoToMs(raw.updated_at) === undefined) {
      throw new Error(`section ${raw.id}: updated_at is not ISO 8601 with offset`);
    }
    this.sections[locale].set(raw.id, { ...raw });
  }

  removeSection(locale: Locale, id: string): boolean {
    return this.sections[locale].delete(id);
  }

  /** Every section of the locale, active or not, in editorial order. */
  listSections(locale: Locale): RawSection[] {
    return [...this.sections[locale].values()].sort((a, b) => a.position - b.position || (a.id < b.id ? -1 : 1));
  }

  /** One page of articles plus the total matching the filters; O(log n) once sorted. */
  queryArticles(query: ArticleQuery): { data: RawArticle[]; total: number } {
    const view = this.articles[query.locale].view(query.publishedOnly === true);
    const from = query.updatedSinceMs === undefined ? 0 : firstAtOrAfter(view, query.updatedSinceMs);
    const start = from + (query.page - 1) * query.perPage;
    const data = view.slice(start, Math.min(view.length, start + query.perPage)).map((e) => e.raw);
    return { data, total: view.length - from };
  }
}

function firstAtOrAfter(entries: Entry[], ms: number): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (entries[mid]!.updatedMs < ms) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
