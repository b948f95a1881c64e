import type { Index, Meilisearch, SearchParams } from 'meilisearch';
import type { StoreSession } from '../../db/snapshot-store.js';
import { ServiceUnavailableError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { EngineHealth, SearchEngine, SearchPage, SearchQuery } from '../engine.js';
import { describeMeiliError, indexUid } from './client.js';
import type { MeiliIndexConfig } from './settings.js';

// Hits read to rank around entries the snapshot no longer exposes; past that many, the pages
// are ranked from the first ones only (a rebuild by the next sync fixes the index itself).
const EXACT_BATCH = 1000;
const MAX_EXACT_HITS = 20_000;

const UNAVAILABLE = 'Search is unavailable right now; lists and articles still work, please retry search later.';

/** A value inside a Meilisearch filter expression, quoted. */
const quote = (value: string) => `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;

/**
 * Searches Meilisearch, one index per locale. Exposure is part of the filter (active sections,
 * published_at not in the future), so `total` counts what partners may see; the rows then come
 * from the snapshot (src/content/search.ts), which drops anything the index still has but the
 * snapshot no longer exposes. Any failure of Meilisearch is a 503 on search only.
 */
export class MeilisearchEngine implements SearchEngine {
  readonly name = 'meilisearch' as const;
  readonly followsSnapshot = false;
  private lastProblem: string | undefined;

  constructor(
    private readonly client: Meilisearch,
    private readonly indexPrefix: string,
    private readonly indexConfig: MeiliIndexConfig,
    private readonly logger: Logger,
  ) {}

  async search(_session: StoreSession, query: SearchQuery): Promise<SearchPage> {
    const sections = query.section === undefined ? query.activeSections : query.activeSections.filter((s) => s === query.section);
    if (sections.length === 0) return { ids: [], total: 0 };
    const filter = [
      `section_slug IN [${sections.map(quote).join(', ')}]`,
      `published_at_ts <= ${Math.floor(query.now / 1000)}`,
    ];
    try {
      const index = this.client.index(indexUid(this.indexPrefix, query.locale));
      const params = {
        filter,
        attributesToRetrieve: ['id'],
        matchingStrategy: 'all' as const,
        locales: this.indexConfig.searchLocales(query.locale),
      };
      const page = await this.searchPage(index, query.q, { ...params, page: query.page, hitsPerPage: query.limit });
      this.recovered();
      if (page.ids.every((id) => query.exposure.rank(id) >= 0)) return page;
      // The index still holds articles the snapshot no longer exposes (between a commit and
      // the index update that follows it, or after an update failed). Rank from all the hits
      // the snapshot agrees with, so pages stay full and the total stays honest.
      return await this.agreeingPage(index, query, params, page.total);
    } catch (error) {
      throw this.unavailable(error);
    }
  }

  private async searchPage(index: Index, q: string, params: SearchParams): Promise<SearchPage> {
    const result = await index.search(q, params);
    // With page/hitsPerPage the answer carries an exact totalHits.
    const total = (result as { totalHits?: unknown }).totalHits;
    const ids = Array.isArray(result.hits) ? result.hits.map((hit) => Number(hit.id)) : [NaN];
    // A proxy or a wrong version could answer 200 with something else: treat it as down.
    if (ids.some((id) => !Number.isSafeInteger(id)) || typeof total !== 'number') {
      throw new SyntaxError('unexpected search response');
    }
    return { ids, total };
  }

  private async agreeingPage(index: Index, query: SearchQuery, params: SearchParams, total: number): Promise<SearchPage> {
    const agreeing: number[] = [];
    const pages = Math.ceil(Math.min(total, MAX_EXACT_HITS) / EXACT_BATCH);
    for (let page = 1; page <= pages; page += 1) {
      const batch = await this.searchPage(index, query.q, { ...params, page, hitsPerPage: EXACT_BATCH });
      for (const id of batch.ids) if (query.exposure.rank(id) >= 0) agreeing.push(id);
    }
    const from = (query.page - 1) * query.limit;
    return { ids: agreeing.slice(from, from + query.limit), total: agreeing.length };
  }

  async health(): Promise<EngineHealth> {
    try {
      const health = await this.client.health();
      if (health?.status !== 'available') return { engine: this.name, status: 'unavailable', detail: 'not available' };
      return { engine: this.name, status: 'ok' };
    } catch (error) {
      return { engine: this.name, status: 'unavailable', detail: describeMeiliError(error) };
    }
  }

  async close(): Promise<void> {}

  private unavailable(error: unknown): ServiceUnavailableError {
    const reason = describeMeiliError(error);
    if (reason !== this.lastProblem) {
      this.lastProblem = reason;
      this.logger.error({ search: this.name, reason }, `search unavailable: ${reason}`);
    }
    return new ServiceUnavailableError(UNAVAILABLE, reason, { cause: error });
  }

  private recovered(): void {
    if (this.lastProblem === undefined) return;
    this.logger.info({ search: this.name, previous: this.lastProblem }, 'search available again');
    this.lastProblem = undefined;
  }
}
