import { MeilisearchApiError, type Index, type Meilisearch, type SearchParams } from 'meilisearch';
import { meilisearchExposureFilter } from '../../db/snapshot/exposure.js';
import type { StoreSession } from '../../db/snapshot/snapshot-store.js';
import { ServiceUnavailableError } from '../../errors.js';
import { LOCALES, type Locale } from '../../locale.js';
import type { Logger } from '../../logger.js';
import type { EngineHealth, EngineIndexHealth, SearchEngine, SearchPage, SearchQuery } from '../engine.js';
import { normalizeQuery } from '../normalize.js';
import { meiliQueryText } from './query.js';
import { describeMeiliError, indexUid, MeiliDegradedError } from './client.js';
import type { MeiliIndexConfig } from './settings.js';
import { readUnsynced } from './unsynced.js';
import { fetchServerVersion, MeiliVersionError } from './version.js';

const UNAVAILABLE = 'Search is unavailable right now; lists and articles still work, please retry search later.';
const REPAIR = 'the sync worker rebuilds it on its next run (or run `npm run sync -- --reindex`)';

/** `order=newest` and `oldest`: by publication time, ties by slug, as the list orders. */
const SORTS: Record<'newest' | 'oldest', string[]> = { newest: ['published_at_ts:desc', 'slug:asc'], oldest: ['published_at_ts:asc', 'slug:asc'] };

const errorCode = (error: unknown) =>
  error instanceof MeilisearchApiError ? (error.cause as { code?: string } | undefined)?.code : undefined;

/**
 * Searches Meilisearch, one index per locale, in one request per partner search. The query is
 * the normalised one shared with the embedded engine (src/search/normalize.ts): plain words
 * only, so Meilisearch never reads `-word` as an exclusion or `"..."` as a phrase, and a query
 * without words returns nothing instead of Meilisearch's placeholder search (everything).
 * Exposure is part of the filter (src/db/snapshot/exposure.ts: active sections, published_at
 * not in the future; only published articles are indexed), and so are
 * the ids the worker has marked as not yet synced (src/search/meilisearch/unsynced.ts), so
 * `total` counts what partners may see; the rows then come from the snapshot
 * (src/content/search.ts), which also drops any hit it does not expose. Any failure of
 * Meilisearch is a 503 on search only.
 */
export class MeilisearchEngine implements SearchEngine {
  readonly name = 'meilisearch' as const;
  readonly followsSnapshot = false;
  private lastProblem: string | undefined;
  /** The server's version once read; `null` when the key may not read it (no `version` action). */
  private version: string | null | undefined;

  constructor(
    private readonly client: Meilisearch,
    private readonly indexPrefix: string,
    private readonly indexConfig: MeiliIndexConfig,
    private readonly logger: Logger,
  ) {}

  async search(session: StoreSession, query: SearchQuery): Promise<SearchPage> {
    const normalized = normalizeQuery(query.q);
    if (normalized.words.length === 0) return { ids: [], total: 0 };
    const text = meiliQueryText(query.q, normalized);
    const sections = query.section === undefined ? query.activeSections : query.activeSections.filter((s) => s === query.section);
    if (sections.length === 0) return { ids: [], total: 0 };
    const filter = meilisearchExposureFilter(sections, query.now);
    // published_at_ts is whole epoch seconds: ts * 1000 >= after is ts >= ceil(after / 1000),
    // and ts * 1000 < before is ts < ceil(before / 1000).
    if (query.publishedAfterMs !== undefined) filter.push(`published_at_ts >= ${Math.ceil(query.publishedAfterMs / 1000)}`);
    if (query.publishedBeforeMs !== undefined) filter.push(`published_at_ts < ${Math.ceil(query.publishedBeforeMs / 1000)}`);
    const unsynced = readUnsynced(session.db, query.locale);
    if (unsynced !== 'too_many' && unsynced.length > 0) filter.push(`id NOT IN [${unsynced.join(', ')}]`);
    try {
      await this.checkVersion();
      const index = this.client.index(indexUid(this.indexPrefix, query.locale));
      const page = await this.searchPage(index, text, query.signal, {
        filter,
        // `sort` is the first ranking rule (meilisearch.config.json): given, it orders alone.
        ...(query.order === 'newest' || query.order === 'oldest' ? { sort: SORTS[query.order] } : {}),
        attributesToRetrieve: ['id'],
        matchingStrategy: 'all',
        locales: this.indexConfig.searchLocales(query.locale),
        page: query.page,
        hitsPerPage: query.limit,
      } as SearchParams);
      this.recovered();
      return page;
    } catch (error) {
      // Stopped at its time budget: admission answers the partner; Meilisearch is not down.
      if (query.signal?.aborted) throw query.signal.reason;
      throw this.unavailable(error, query.locale);
    }
  }

  /**
   * The search's own signal, so that a search stopped at its time budget ends its request and
   * admission frees its slot at once, rather than at MEILI_TIMEOUT_MS for a partner who was
   * already answered. Given a signal, the client no longer applies its own timeout, so the
   * signal carries it too.
   */
  private requestSignal(signal: AbortSignal): AbortSignal {
    const timeoutMs = this.client.config.timeout;
    return timeoutMs ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : signal;
  }

  private async searchPage(index: Index, q: string, signal: AbortSignal | undefined, params: SearchParams): Promise<SearchPage> {
    const result = await index.search(q, params, signal ? { signal: this.requestSignal(signal) } : undefined);
    // With page/hitsPerPage the answer carries an exact totalHits.
    const total = (result as { totalHits?: unknown }).totalHits;
    const ids = Array.isArray(result.hits) ? result.hits.map((hit) => Number(hit.id)) : [NaN];
    // A proxy or a wrong version could answer 200 with something else: treat it as down.
    if (ids.some((id) => !Number.isSafeInteger(id)) || typeof total !== 'number') {
      throw new SyntaxError('unexpected search response');
    }
    if ((result as { degraded?: unknown }).degraded === true) {
      throw new MeiliDegradedError(
        'Meilisearch stopped ranking at its search cutoff (degraded: true, searchCutoffMs) and answered unranked hits: the server is overloaded or the query too costly',
      );
    }
    return { ids, total };
  }

  /**
   * GET /version once: a server older than the minimum is refused (every search 503, the
   * reason in the log and /health). A key without the `version` action (a plain search key)
   * cannot read it: the API then goes on without knowing, the worker checks it anyway.
   */
  private async checkVersion(): Promise<void> {
    if (this.version !== undefined) return;
    try {
      this.version = (await fetchServerVersion(this.client)).text;
    } catch (error) {
      if (errorCode(error) !== 'invalid_api_key') throw error;
      this.version = null;
    }
  }

  /**
   * Reads the server's version at start-up, so the log says at once whether this API can use
   * the server (or why not); never throws: searches check again until it succeeds.
   */
  async verifyServer(): Promise<void> {
    try {
      await this.checkVersion();
      if (this.version === null) this.logger.info({ search: this.name }, 'Meilisearch version not readable with this key (no `version` action): not checked');
      else this.logger.info({ search: this.name, version: this.version }, `Meilisearch ${this.version}`);
    } catch (error) {
      this.logger.error({ search: this.name, reason: describeMeiliError(error) }, `Meilisearch not usable yet: ${describeMeiliError(error)}`);
    }
  }

  async health(): Promise<EngineHealth> {
    const base = { engine: this.name };
    try {
      const health = await this.client.health();
      if (health?.status !== 'available') return { ...base, status: 'unavailable', detail: 'not available' };
      await this.checkVersion();
      const indexes = Object.fromEntries(await Promise.all(LOCALES.map(async (l) => [l, await this.indexHealth(l)] as const)));
      const broken = Object.values(indexes).find((i) => i.status !== 'ok');
      const detail = broken && `search index ${broken.uid} ${broken.status === 'missing' ? 'does not exist' : 'has not got its settings'}: ${REPAIR}`;
      return { ...base, status: broken ? 'unavailable' : 'ok', ...(detail ? { detail } : {}), version: this.version ?? null, indexes };
    } catch (error) {
      return { ...base, status: 'unavailable', detail: describeMeiliError(error) };
    }
  }

  /**
   * The state of a locale's live index, with the search key: a search for nothing (no hits
   * asked) that filters and sorts on what the real searches use. A missing index answers
   * index_not_found; one created by a document upload, with default settings, refuses the
   * filter or the sort.
   */
  private async indexHealth(locale: Locale): Promise<EngineIndexHealth> {
    const uid = indexUid(this.indexPrefix, locale);
    try {
      const result = await this.client.index(uid).search('', {
        filter: ['id >= 0', 'section_slug EXISTS', 'published_at_ts EXISTS'],
        sort: SORTS.newest,
        page: 1,
        hitsPerPage: 0,
      });
      const documents = (result as { totalHits?: unknown }).totalHits;
      return { uid, status: 'ok', documents: typeof documents === 'number' ? documents : null };
    } catch (error) {
      const code = errorCode(error);
      if (code === 'index_not_found') return { uid, status: 'missing', documents: null };
      if (code === 'invalid_search_filter' || code === 'invalid_search_sort') return { uid, status: 'unconfigured', documents: null };
      throw error;
    }
  }

  async close(): Promise<void> {}

  private unavailable(error: unknown, locale: Locale): ServiceUnavailableError {
    const uid = indexUid(this.indexPrefix, locale);
    const code = errorCode(error);
    let reason = describeMeiliError(error);
    if (code === 'index_not_found') reason = `search index ${uid} does not exist: ${REPAIR}`;
    if (code === 'invalid_search_filter' || code === 'invalid_search_sort') reason = `search index ${uid} has not got its settings (${reason}): ${REPAIR}`;
    if (error instanceof MeiliVersionError) this.version = undefined;
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
