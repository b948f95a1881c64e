import { dirname, isAbsolute, resolve } from 'node:path';
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadApiConfig } from '../../../src/config/api.js';
import { loadCliConfig } from '../../../src/config/cli.js';
import { loadWorkerConfig, requireCms } from '../../../src/config/worker.js';
import { ConfigError } from '../../../src/errors.js';
import { runNode, SERVER_PATH } from '../../support/run-node.js';

type Env = Record<string, string | undefined>;

const CMS = { CMS_BASE_URL: 'https://cms.example.com' };
const DEFAULT_DATABASE = resolve('data/syndication.db');

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

describe('loadApiConfig', () => {
  it('has working defaults for everything', () => {
    const config = loadApiConfig({});
    expect(config.port).toBe(3000);
    expect(config.host).toBe('0.0.0.0');
    expect(config.databasePath).toBe(DEFAULT_DATABASE);
    expect(isAbsolute(config.databasePath)).toBe(true);
    expect(config.busyTimeoutMs).toBe(2_000);
    expect(config.logLevel).toBe('info');
    // One 32 MB budget: three quarters for responses, a quarter for the search threads.
    expect(config.responseCacheBytes).toBe(24 * 1024 * 1024);
    expect(config.searchRuntime.cacheBytesPerWorker * config.searchRuntime.workers).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(config.searchRuntime).toMatchObject({ timeoutMs: 2_000, rankAllMax: 2_000 });
    expect(config.rateLimit).toEqual({ perMinute: 0, burstSeconds: 10 });
    expect(config.search).toEqual({ engine: 'sqlite' });
  });

  it('gives the host about one search thread per core beside each main thread, shared out between its API processes', () => {
    const cores = availableParallelism();
    expect(loadApiConfig({}).searchRuntime.workers).toBe(Math.max(1, cores - 1));
    expect(loadApiConfig({ WEB_CONCURRENCY: String(cores) }).searchRuntime.workers).toBe(1);
    expect(loadApiConfig({ WEB_CONCURRENCY: String(cores * 4) }).searchRuntime.workers).toBe(1);
    expect(loadApiConfig({ WEB_CONCURRENCY: '2', SEARCH_WORKERS: '3' }).searchRuntime.workers).toBe(3);
    // The embedded engine runs as many searches at once as it has threads.
    expect(loadApiConfig({ WEB_CONCURRENCY: String(cores) }).searchRuntime.concurrency).toBe(1);
  });

  it('reads the default rate limit, 0 turning it off', () => {
    expect(loadApiConfig({ RATE_LIMIT_PER_MINUTE: '120', RATE_LIMIT_BURST_SECONDS: '30' }).rateLimit).toEqual({ perMinute: 120, burstSeconds: 30 });
    expect(loadApiConfig({ RATE_LIMIT_PER_MINUTE: '0' }).rateLimit.perMinute).toBe(0);
  });

  it('reads each variable and resolves a relative DATABASE_PATH', () => {
    const config = loadApiConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      DATABASE_PATH: 'somewhere/else.db',
      DATABASE_BUSY_TIMEOUT_MS: '500',
      LOG_LEVEL: 'debug',
      RESPONSE_CACHE_MB: '0',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      databasePath: resolve('somewhere/else.db'),
      busyTimeoutMs: 500,
      logLevel: 'debug',
      responseCacheBytes: 0,
    });
    expect(loadApiConfig({ DATABASE_PATH: '/srv/data/x.db' }).databasePath).toBe('/srv/data/x.db');
  });

  it('uses sqlite search without MEILI_HOST and meilisearch with it', () => {
    expect(loadApiConfig({}).search.engine).toBe('sqlite');
    const meili = loadApiConfig({ MEILI_HOST: 'http://localhost:7700/', MEILI_API_KEY: 'k' }).search;
    expect(meili.engine).toBe('meilisearch');
    expect(meili.meilisearch).toEqual({ host: 'http://localhost:7700', apiKey: 'k', indexPrefix: 'articles', timeoutMs: 2_000 });
    // An explicit choice wins over the presence of MEILI_HOST.
    expect(loadApiConfig({ SEARCH_ENGINE: 'sqlite', MEILI_HOST: 'http://localhost:7700' }).search.engine).toBe('sqlite');
  });

  it('treats an empty variable as unset', () => {
    const config = loadApiConfig({
      PORT: '',
      HOST: '',
      DATABASE_PATH: '',
      DATABASE_BUSY_TIMEOUT_MS: '',
      LOG_LEVEL: '',
      SEARCH_ENGINE: '',
      MEILI_HOST: '',
      RESPONSE_CACHE_MB: '',
    });
    expect(config).toEqual(loadApiConfig({}));
  });

  it('returns a frozen object', () => {
    const config = loadApiConfig({});
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads only the variables it is given, not process.env', () => {
    const saved = process.env.PORT;
    process.env.PORT = '4321';
    try {
      expect(loadApiConfig({}).port).toBe(3000);
    } finally {
      if (saved === undefined) delete process.env.PORT;
      else process.env.PORT = saved;
    }
  });
});

describe('loadWorkerConfig', () => {
  it('has working defaults for everything but CMS_BASE_URL', () => {
    const config = loadWorkerConfig(CMS);
    expect(config.databasePath).toBe(DEFAULT_DATABASE);
    expect(config.busyTimeoutMs).toBe(30_000);
    expect(config.logLevel).toBe('info');
    expect(config.cms).toEqual({
      baseUrl: 'https://cms.example.com',
      token: undefined,
      timeoutMs: 10_000,
      maxAttempts: 5,
      retryBudgetMs: 60_000,
      maxResponseBytes: 32 * 1024 * 1024,
      pageSize: 100,
    });
    expect(config.schedule).toEqual({ incremental: '*/5 * * * *', full: '0 * * * *' });
    expect(config.overlapSeconds).toBe(300);
    expect(config.search).toEqual({ engine: 'sqlite' });
  });

  it('reads the schedule, the CMS token and meilisearch settings', () => {
    const config = loadWorkerConfig({
      ...CMS,
      CMS_TOKEN: 'cms-token',
      SYNC_CRON: '*/2 * * * *',
      SYNC_FULL_CRON: '30 3 * * *',
      MEILI_HOST: 'https://search.example.com',
      MEILI_INDEX_PREFIX: 'staging_articles',
    });
    expect(requireCms(config).token).toBe('cms-token');
    expect(config.schedule).toEqual({ incremental: '*/2 * * * *', full: '30 3 * * *' });
    expect(config.search.engine).toBe('meilisearch');
    expect(config.search.meilisearch?.indexPrefix).toBe('staging_articles');
  });

  it('loads without CMS_BASE_URL (status and reindex need no CMS) but then has no CMS settings', () => {
    const config = loadWorkerConfig({ CMS_TOKEN: 'cms-token' });
    expect(config.cms).toBeUndefined();
    expect(config.schedule).toEqual({ incremental: '*/5 * * * *', full: '0 * * * *' });
  });

  it('treats an empty variable as unset', () => {
    expect(loadWorkerConfig({ ...CMS, SYNC_CRON: '', CMS_PAGE_SIZE: '', CMS_TOKEN: '', MEILI_HOST: '' })).toEqual(
      loadWorkerConfig(CMS),
    );
  });
});

describe('loadCliConfig', () => {
  it('defaults to the same database file as the API and the worker, with a long busy timeout', () => {
    const config = loadCliConfig({});
    expect(config.databasePath).toBe(DEFAULT_DATABASE);
    expect(config.databasePath).toBe(loadApiConfig({}).databasePath);
    expect(config.databasePath).toBe(loadWorkerConfig(CMS).databasePath);
    expect(config.busyTimeoutMs).toBe(60_000);
  });

  it('reads DATABASE_PATH and DATABASE_BUSY_TIMEOUT_MS, empty meaning unset', () => {
    expect(loadCliConfig({ DATABASE_PATH: 'x/snapshot.db', DATABASE_BUSY_TIMEOUT_MS: '10' })).toEqual({
      databasePath: resolve('x/snapshot.db'),
      keysDatabasePath: resolve('x/keys.db'),
      busyTimeoutMs: 10,
    });
    expect(loadCliConfig({ DATABASE_PATH: '', DATABASE_BUSY_TIMEOUT_MS: '', KEYS_DATABASE_PATH: '' })).toEqual(loadCliConfig({}));
  });
});

describe('KEYS_DATABASE_PATH', () => {
  it('defaults to keys.db beside the snapshot, the same for the API and the CLI', () => {
    expect(loadApiConfig({}).keysDatabasePath).toBe(resolve(dirname(DEFAULT_DATABASE), 'keys.db'));
    expect(loadCliConfig({}).keysDatabasePath).toBe(loadApiConfig({}).keysDatabasePath);
    expect(loadApiConfig({ DATABASE_PATH: '/srv/data/snap.db' }).keysDatabasePath).toBe('/srv/data/keys.db');
    expect(loadCliConfig({ DATABASE_PATH: 'rel/snap.db' }).keysDatabasePath).toBe(resolve('rel/keys.db'));
  });

  it('is read and resolved when set, for the API and the CLI alike', () => {
    const env = { DATABASE_PATH: '/srv/data/snap.db', KEYS_DATABASE_PATH: 'secure/keys.sqlite' };
    expect(loadApiConfig(env).keysDatabasePath).toBe(resolve('secure/keys.sqlite'));
    expect(loadCliConfig(env).keysDatabasePath).toBe(resolve('secure/keys.sqlite'));
  });
});

describe('invalid values', () => {
  const api = (env: Env) => () => loadApiConfig(env);
  const worker = (env: Env) => () => loadWorkerConfig({ ...CMS, ...env });
  const cli = (env: Env) => () => loadCliConfig(env);

  it.each([
    ['PORT=abc', 'PORT', api({ PORT: 'abc' })],
    ['PORT=70000', 'PORT', api({ PORT: '70000' })],
    ['PORT=-1', 'PORT', api({ PORT: '-1' })],
    ['PORT=80.5', 'PORT', api({ PORT: '80.5' })],
    ['LOG_LEVEL=loud (API)', 'LOG_LEVEL', api({ LOG_LEVEL: 'loud' })],
    ['LOG_LEVEL=loud (worker)', 'LOG_LEVEL', worker({ LOG_LEVEL: 'loud' })],
    ['LOG_LEVEL=loud (CLI)', 'LOG_LEVEL', cli({ LOG_LEVEL: 'loud' })],
    ['SEARCH_ENGINE=elastic', 'SEARCH_ENGINE', api({ SEARCH_ENGINE: 'elastic' })],
    ['SEARCH_ENGINE=meilisearch without MEILI_HOST (API)', 'MEILI_HOST', api({ SEARCH_ENGINE: 'meilisearch' })],
    ['SEARCH_ENGINE=meilisearch without MEILI_HOST (worker)', 'MEILI_HOST', worker({ SEARCH_ENGINE: 'meilisearch' })],
    ['MEILI_HOST=ftp://x', 'MEILI_HOST', api({ MEILI_HOST: 'ftp://x' })],
    ['MEILI_HOST=not a url', 'MEILI_HOST', api({ MEILI_HOST: 'not a url' })],
    ['DATABASE_BUSY_TIMEOUT_MS=abc (API)', 'DATABASE_BUSY_TIMEOUT_MS', api({ DATABASE_BUSY_TIMEOUT_MS: 'abc' })],
    ['DATABASE_BUSY_TIMEOUT_MS=abc (CLI)', 'DATABASE_BUSY_TIMEOUT_MS', cli({ DATABASE_BUSY_TIMEOUT_MS: 'abc' })],
    ['CMS_BASE_URL missing, for the commands that read the CMS', 'CMS_BASE_URL', () => requireCms(loadWorkerConfig({}))],
    ['CMS_BASE_URL empty, for the commands that read the CMS', 'CMS_BASE_URL', () => requireCms(loadWorkerConfig({ CMS_BASE_URL: '' }))],
    ['CMS_BASE_URL=ftp://cms', 'CMS_BASE_URL', () => loadWorkerConfig({ CMS_BASE_URL: 'ftp://cms' })],
    ['SYNC_CRON="not cron"', 'SYNC_CRON', worker({ SYNC_CRON: 'not cron' })],
    ['SYNC_FULL_CRON="every hour"', 'SYNC_FULL_CRON', worker({ SYNC_FULL_CRON: 'every hour' })],
    ['CMS_PAGE_SIZE=101', 'CMS_PAGE_SIZE', worker({ CMS_PAGE_SIZE: '101' })],
    ['CMS_PAGE_SIZE=0', 'CMS_PAGE_SIZE', worker({ CMS_PAGE_SIZE: '0' })],
    ['RATE_LIMIT_PER_MINUTE=10/s', 'RATE_LIMIT_PER_MINUTE', api({ RATE_LIMIT_PER_MINUTE: '10/s' })],
    ['RATE_LIMIT_PER_MINUTE=-5', 'RATE_LIMIT_PER_MINUTE', api({ RATE_LIMIT_PER_MINUTE: '-5' })],
    ['RATE_LIMIT_BURST_SECONDS=0', 'RATE_LIMIT_BURST_SECONDS', api({ RATE_LIMIT_BURST_SECONDS: '0' })],
  ])('%s throws a ConfigError naming %s', (_name, variable, load) => {
    expect(configError(load).message).toContain(variable);
  });

  it('names every invalid variable at once', () => {
    const message = configError(api({ PORT: 'abc', LOG_LEVEL: 'loud' })).message;
    expect(message).toContain('PORT');
    expect(message).toContain('LOG_LEVEL');
  });

  it('never echoes CMS_TOKEN or MEILI_API_KEY in a message', () => {
    const secrets = { CMS_TOKEN: 'cms-secret-4f9a', MEILI_API_KEY: 'meili-secret-7c21' };
    const messages = [
      configError(() => requireCms(loadWorkerConfig({ ...secrets }))).message,
      configError(() => loadWorkerConfig({ ...secrets, ...CMS, SYNC_CRON: 'not cron', PORT: 'x' })).message,
      configError(() => loadWorkerConfig({ ...secrets, ...CMS, SEARCH_ENGINE: 'meilisearch' })).message,
      configError(() => loadApiConfig({ ...secrets, MEILI_HOST: 'ftp://x' })).message,
      configError(() => loadApiConfig({ ...secrets, SEARCH_ENGINE: 'meilisearch' })).message,
    ];
    for (const message of messages) {
      expect(message).not.toContain(secrets.CMS_TOKEN);
      expect(message).not.toContain(secrets.MEILI_API_KEY);
    }
  });
});

describe('the API entry point with an invalid configuration', () => {
  it('exits 1 with one line on stderr naming PORT', async () => {
    const result = await runNode([SERVER_PATH], { PORT: 'abc', DATABASE_PATH: '/nonexistent/never.db' }, { timeoutMs: 10_000 });
    expect(result.timedOut).toBe(false);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('PORT');
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });
});
