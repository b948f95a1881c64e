import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadApiConfig } from '../../../src/config/api.js';
import { loadWorkerConfig } from '../../../src/config/worker.js';
import { openWriter } from '../../../src/db/sqlite/connection.js';
import { ConfigError } from '../../../src/errors.js';
import { createSearchEngine, createSearchIndexer } from '../../../src/search/create-engine.js';
import { BODY_FIELDS } from '../../../src/search/meilisearch/documents.js';
import { MeilisearchEngine } from '../../../src/search/meilisearch/engine.js';
import { MeilisearchIndexer } from '../../../src/search/meilisearch/indexer.js';
import { loadMeiliIndexConfig } from '../../../src/search/meilisearch/settings.js';
import { SqliteFtsEngine } from '../../../src/search/sqlite/sqlite-fts.js';
import { addKey, memoryLogger, startApi, testClock } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { startFakeMeilisearch, type FakeMeilisearch } from '../../fakes/fake-meilisearch.js';
import { uniqueIndexPrefix } from '../../support/meili-fixture.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';
import { expectError } from '../../support/contract-helpers.js';

/** The ConfigError `load` throws; fails the test when it throws nothing or something else. */
function configError(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

const HOST = 'http://127.0.0.1:7700';
const { logger } = memoryLogger('silent');

describe('choosing the search engine', () => {
  it.each([
    ['API', loadApiConfig],
    ['worker', loadWorkerConfig],
  ] as const)('defaults to sqlite without MEILI_HOST and to meilisearch with it (%s)', (_name, load) => {
    expect(load({}).search).toEqual({ engine: 'sqlite' });
    expect(load({ MEILI_HOST: '' }).search).toEqual({ engine: 'sqlite' });
    expect(load({ MEILI_HOST: HOST }).search).toEqual({
      engine: 'meilisearch',
      // Per request: the API searches (2 s), the worker also manages indexes (30 s, plus time per MB of upload).
      meilisearch: { host: HOST, apiKey: undefined, indexPrefix: 'articles', timeoutMs: _name === 'API' ? 2_000 : 30_000 },
    });
  });

  it('lets SEARCH_ENGINE override the default either way', () => {
    expect(loadApiConfig({ SEARCH_ENGINE: 'sqlite', MEILI_HOST: HOST }).search).toEqual({ engine: 'sqlite' });
    expect(loadWorkerConfig({ SEARCH_ENGINE: 'sqlite', MEILI_HOST: HOST }).search).toEqual({ engine: 'sqlite' });
    expect(loadApiConfig({ SEARCH_ENGINE: 'meilisearch', MEILI_HOST: HOST }).search.engine).toBe('meilisearch');
  });

  it('reads MEILI_API_KEY, MEILI_INDEX_PREFIX, MEILI_TIMEOUT_MS (API) and MEILI_WORKER_TIMEOUT_MS (worker)', () => {
    const env = { MEILI_HOST: `${HOST}/`, MEILI_API_KEY: 'secret-key', MEILI_INDEX_PREFIX: 'staging_articles', MEILI_TIMEOUT_MS: '750', MEILI_WORKER_TIMEOUT_MS: '45000' };
    expect(loadApiConfig(env).search.meilisearch).toEqual({ host: HOST, apiKey: 'secret-key', indexPrefix: 'staging_articles', timeoutMs: 750 });
    expect(loadWorkerConfig(env).search.meilisearch).toEqual({ host: HOST, apiKey: 'secret-key', indexPrefix: 'staging_articles', timeoutMs: 45_000 });
  });

  it('gives the API MEILI_SEARCH_KEY and the worker MEILI_ADMIN_KEY, each falling back to MEILI_API_KEY', () => {
    const env = { MEILI_HOST: HOST, MEILI_API_KEY: 'shared-key', MEILI_SEARCH_KEY: 'search-key', MEILI_ADMIN_KEY: 'admin-key' };
    expect(loadApiConfig(env).search.meilisearch?.apiKey).toBe('search-key');
    expect(loadWorkerConfig(env).search.meilisearch?.apiKey).toBe('admin-key');
    expect(loadApiConfig({ ...env, MEILI_SEARCH_KEY: '' }).search.meilisearch?.apiKey).toBe('shared-key');
    expect(loadWorkerConfig({ ...env, MEILI_ADMIN_KEY: '' }).search.meilisearch?.apiKey).toBe('shared-key');
  });

  it('never echoes a Meilisearch key in a configuration error', () => {
    const message = configError(() => loadWorkerConfig({ MEILI_HOST: HOST, MEILI_ADMIN_KEY: 'admin-key-1234', MEILI_WORKER_TIMEOUT_MS: 'soon' })).message;
    expect(message).toContain('MEILI_WORKER_TIMEOUT_MS');
    expect(message).not.toContain('admin-key-1234');
  });

  it.each([
    ['SEARCH_ENGINE=meilisearch without MEILI_HOST', { SEARCH_ENGINE: 'meilisearch' }, 'MEILI_HOST'],
    ['SEARCH_ENGINE=elastic', { SEARCH_ENGINE: 'elastic' }, 'SEARCH_ENGINE'],
    ['MEILI_INDEX_PREFIX with a space', { MEILI_HOST: HOST, MEILI_INDEX_PREFIX: 'my articles' }, 'MEILI_INDEX_PREFIX'],
    ['MEILI_TIMEOUT_MS=0', { MEILI_HOST: HOST, MEILI_TIMEOUT_MS: '0' }, 'MEILI_TIMEOUT_MS'],
    ['MEILI_TIMEOUT_MS=2s', { MEILI_HOST: HOST, MEILI_TIMEOUT_MS: '2s' }, 'MEILI_TIMEOUT_MS'],
  ])('refuses %s, naming the variable', (_name, env, variable) => {
    expect(configError(() => loadApiConfig(env)).message).toContain(variable);
    expect(configError(() => loadWorkerConfig(env)).message).toContain(variable);
  });

  it('builds the embedded engine and no indexer for sqlite', async () => {
    const search = loadApiConfig({}).search;
    const engine = createSearchEngine(search, logger);
    expect(engine).toBeInstanceOf(SqliteFtsEngine);
    expect(engine.name).toBe('sqlite');
    expect(createSearchIndexer(loadWorkerConfig({}).search, logger)).toBeUndefined();
    await engine.close();
  });

  it('builds the Meilisearch engine and indexer for meilisearch', async () => {
    const engine = createSearchEngine(loadApiConfig({ MEILI_HOST: HOST }).search, logger);
    expect(engine).toBeInstanceOf(MeilisearchEngine);
    expect(engine).toMatchObject({ name: 'meilisearch', followsSnapshot: false });
    expect(createSearchIndexer(loadWorkerConfig({ MEILI_HOST: HOST }).search, logger)).toBeInstanceOf(MeilisearchIndexer);
    await engine.close();
  });
});

describe('the configured engine and indexer, end to end', () => {
  const KEY = 'wired-master-key-2d81';
  const SEARCH_KEY = 'wired-search-key';
  const ADMIN_KEY = 'wired-admin-key';
  const NOW = '2026-11-01T12:00:00Z';
  const dir = tempDir('meili-config-');
  const dbPath = dir.path('snapshot.db');
  const prefix = uniqueIndexPrefix('config');
  let fake: FakeMeilisearch;

  beforeAll(async () => {
    fake = await startFakeMeilisearch({
      masterKey: KEY,
      taskDelayMs: 1,
      apiKeys: [
        { key: SEARCH_KEY, actions: ['search'], indexes: [`${prefix}_*`] },
        { key: ADMIN_KEY, actions: ['*'], indexes: ['*'] },
      ],
    });
    buildSnapshot(dbPath, {
      sections: [rawSection({ slug: 'fiber', name: 'Alpha' }), { ...rawSection({ slug: 'fiber', name: '资讯' }), locale: 'zh' as const }],
      articles: [rawArticle({ slug: 'laser-cutting', title: 'Laser cutting of thick steel', section_slug: 'fiber', published_at: '2026-11-01T10:00:00Z' })],
      now: Date.parse(NOW),
    });
  });

  afterAll(async () => {
    await fake?.close();
    dir.cleanup();
  });

  it('uses MEILI_HOST, the search key (API) and the admin key (worker), MEILI_INDEX_PREFIX and MEILI_TIMEOUT_MS; one request per search', async () => {
    // The keys an operator would create: the API's may only search our indexes.
    const env = { MEILI_HOST: fake.url, MEILI_SEARCH_KEY: SEARCH_KEY, MEILI_ADMIN_KEY: ADMIN_KEY, MEILI_INDEX_PREFIX: prefix, MEILI_TIMEOUT_MS: '300' };
    const indexer = createSearchIndexer(loadWorkerConfig(env).search, logger)!;
    const db = openWriter(dbPath, { busyTimeoutMs: 5_000 });
    try {
      await indexer.rebuild(db);
    } finally {
      db.$client.close();
    }
    expect(fake.indexUids()).toEqual([`${prefix}_en`, `${prefix}_zh`]);

    const key = addKey(dbPath).key;
    const api = await startApi({ databasePath: dbPath, clock: testClock(NOW), engine: createSearchEngine(loadApiConfig(env).search, logger) });
    try {
      // The first search also asks for the version, which a search-only key may not read.
      const first = await api.request.get('/api/v1/search').query({ q: 'laser' }).set('X-API-Key', key);
      expect(first.status, first.text).toBe(200);
      const from = fake.requests.length;
      const res = await api.request.get('/api/v1/search').query({ q: 'laser' }).set('X-API-Key', key);
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.map((a: { slug: string }) => a.slug)).toEqual(['laser-cutting']);
      expect(fake.requests.slice(from).map((r) => r.path)).toEqual([`/indexes/${prefix}_en/search`]);
      // A search-only key may not read the version: health says so with null, and is still ok.
      const health = await api.request.get('/health');
      expect(health.body.search).toMatchObject({ engine: 'meilisearch', status: 'ok', version: null, indexes: { en: { status: 'ok', documents: 1 } } });

      // Meilisearch answers after 1.5 s: MEILI_TIMEOUT_MS (300 ms) gives up long before, where
      // the 2 s default would have waited for the answer.
      fake.setHang(true);
      const answer = setTimeout(() => fake.setHang(false), 1_500);
      try {
        expectError(await api.request.get('/api/v1/search').query({ q: 'laser' }).set('X-API-Key', key), 503, 'service_unavailable');
      } finally {
        clearTimeout(answer);
        fake.setHang(false);
      }
    } finally {
      await api.close();
    }
  });
});

describe('meilisearch.config.json', () => {
  const dir = tempDir('meili-config-file-');
  afterAll(() => dir.cleanup());

  const shipped = () => loadMeiliIndexConfig();

  it('gives each locale the shared settings with its own merged over them', () => {
    const config = shipped();
    const en = config.settings('en');
    const zh = config.settings('zh');
    for (const s of [en, zh]) {
      // `body` stands for its parts: long bodies are sent in parts under the engine's position limit.
      expect(s['searchableAttributes']).toEqual(['title', 'excerpt', ...BODY_FIELDS, 'section_name', 'author']);
      expect(s['filterableAttributes']).toEqual(expect.arrayContaining(['section_slug', 'published_at_ts']));
      // slug too: order=newest/oldest break publication-time ties by it (decision 0061).
      expect(s['sortableAttributes']).toEqual(['published_at_ts', 'slug']);
      expect((s['rankingRules'] as string[])[0]).toBe('sort');
      expect((s['pagination'] as { maxTotalHits: number }).maxTotalHits).toBeGreaterThanOrEqual(500_000);
    }
    expect(en['localizedAttributes']).toEqual([{ attributePatterns: ['*'], locales: ['eng'] }]);
    expect(zh['localizedAttributes']).toEqual([{ attributePatterns: ['*'], locales: ['cmn'] }]);
    // Merged, not replaced: zh turns typos off and keeps the rest of the shared typo settings.
    expect(en['typoTolerance']).toMatchObject({ enabled: true, disableOnAttributes: ['author'] });
    expect(zh['typoTolerance']).toMatchObject({ enabled: false, disableOnAttributes: ['author'] });
    expect(config.searchLocales('en')).toEqual(['eng']);
    expect(config.searchLocales('zh')).toEqual(['cmn']);
    expect(config.batchSize).toBeGreaterThanOrEqual(1);
    expect(config.batchSize).toBeLessThanOrEqual(10_000);
  });

  const valid = () => JSON.parse(JSON.stringify({ settings: { searchableAttributes: ['title'] }, locales: { en: {}, zh: {} } })) as Record<string, unknown>;
  const cases: [string, string, string][] = [
    ['text that is not JSON', '{ "settings": ', 'JSON'],
    ['no locales', JSON.stringify({ settings: {} }), 'locales'],
    ['a zh entry missing', JSON.stringify({ settings: {}, locales: { en: {} } }), 'locales.zh'],
    ['settings that are not an object', JSON.stringify({ ...valid(), settings: ['title'] }), 'settings'],
    ['searchLocales that are not strings', JSON.stringify({ ...valid(), locales: { en: {}, zh: { searchLocales: [7] } } }), 'locales.zh.searchLocales'],
    ['batchSize 0', JSON.stringify({ ...valid(), batchSize: 0 }), 'batchSize'],
    ['batchSize 1.5', JSON.stringify({ ...valid(), batchSize: 1.5 }), 'batchSize'],
    ['taskTimeoutMs 10', JSON.stringify({ ...valid(), taskTimeoutMs: 10 }), 'taskTimeoutMs'],
    ['batchBytes past 90 MB (Meilisearch refuses 100 MB)', JSON.stringify({ ...valid(), batchBytes: 100_000_000 }), 'batchBytes'],
    ['taskTimeoutMsPerMb -1', JSON.stringify({ ...valid(), taskTimeoutMsPerMb: -1 }), 'taskTimeoutMsPerMb'],
  ];

  it.each(cases)('refuses %s with a ConfigError naming the file and what is wrong', (_name, content, detail) => {
    const path = dir.path(`case-${Math.random().toString(36).slice(2)}`);
    writeFileSync(`${path}-meilisearch.config.json`, content);
    const error = configError(() => loadMeiliIndexConfig(`${path}-meilisearch.config.json`));
    expect(error.message).toContain('meilisearch.config.json');
    expect(error.message).toContain(detail);
    expect(error.message).not.toContain('\n');
  });

  it('refuses a missing file with a ConfigError', () => {
    const error = configError(() => loadMeiliIndexConfig(dir.path('nowhere/meilisearch.config.json')));
    expect(error.message).toContain('meilisearch.config.json');
  });

  it('accepts a minimal file, with the default batch size and task timeout', () => {
    const path = dir.path('minimal.meilisearch.config.json');
    writeFileSync(path, JSON.stringify(valid()));
    const config = loadMeiliIndexConfig(path);
    expect(config.batchSize).toBe(1_000);
    expect(config.taskTimeoutMs).toBe(120_000);
    expect(config.settings('zh')).toEqual({ searchableAttributes: ['title'] });
    expect(config.searchLocales('zh')).toEqual([]);
  });
});
