import type { Server } from 'node:http';
import { dirname, join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import supertest from 'supertest';
import { createApp, type AppDeps, type App } from '../../src/app.js';
import { DEFAULT_SERVER_LIMITS, defaultAppSettings, fastPathEnabled, type ServerLimits } from '../../src/config/api.js';
import { createApiServer } from '../../src/http/server/server-limits.js';
import type { ResponseCache } from '../../src/http/cache/representation.js';
import { openKeysWriter, type KeysDb } from '../../src/db/keys/keys-connection.js';
import { KeysStore } from '../../src/db/keys/keys-store.js';
import { SnapshotStore } from '../../src/db/snapshot/snapshot-store.js';
import { createKey, type KeyOptions } from '../../src/keys/manage.js';
import { createLogger, type Logger } from '../../src/logger.js';
import type { SearchEngine } from '../../src/search/engine.js';
import { SqliteFtsEngine } from '../../src/search/sqlite/sqlite-fts.js';
import type { Clock } from '../../src/lib/time.js';
import { openReader } from '../../src/db/sqlite/connection.js';

/** A pino logger whose lines are kept in memory, to assert on what gets logged. */
export function memoryLogger(level = 'info'): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger({ level, destination: stream }), lines };
}

/** A clock tests can move. */
export function testClock(start: number | string): Clock & { set(to: number | string): void; advance(ms: number): void } {
  let now = typeof start === 'string' ? Date.parse(start) : start;
  const clock = (() => now) as Clock & { set(to: number | string): void; advance(ms: number): void };
  clock.set = (to) => {
    now = typeof to === 'string' ? Date.parse(to) : to;
  };
  clock.advance = (ms) => {
    now += ms;
  };
  return clock;
}

export interface TestApi {
  app: App;
  url: string;
  request: ReturnType<typeof supertest>;
  store: SnapshotStore;
  keysStore: KeysStore;
  logs: string[];
  close(): Promise<void>;
}

/** The keys database the API uses by default: `keys.db` beside the snapshot (as in src/config/fields.ts). */
export function keysPathFor(databasePath: string): string {
  return join(dirname(databasePath), 'keys.db');
}

/**
 * Starts the real app on 127.0.0.1 and an ephemeral port, over a real snapshot file and a
 * real keys database (beside the snapshot unless `keysDatabasePath` says otherwise).
 */
export async function startApi(options: {
  databasePath: string;
  keysDatabasePath?: string;
  clock?: Clock;
  engine?: SearchEngine;
  busyTimeoutMs?: number;
  /** 0 turns the response cache off, so every request goes through Express. */
  responseCacheBytes?: number;
  publicBaseUrl?: string;
  responseCache?: ResponseCache;
  /** `warn` keeps request lines out of memory, for tests that send many requests. */
  logLevel?: string;
  rateLimit?: AppDeps['rateLimit'];
  processes?: number;
  onResponse?: AppDeps['onResponse'];
  serverLimits?: Partial<ServerLimits>;
  /**
   * The fast path (src/http/fast/fast-path.ts): FAST_PATH of the test's environment by default, so
   * that `npm run test:http:no-fast-path` sends every request through Express; tests of the
   * fast path itself set it.
   */
  fastPath?: boolean;
  /** More of createApp's dependencies (metrics, maximum snapshot age, trusted proxies...). */
  deps?: Partial<Omit<AppDeps, 'store' | 'keysStore' | 'engine' | 'logger' | 'clock'>>;
}): Promise<TestApi> {
  const { logger, lines } = memoryLogger(options.logLevel);
  const store = new SnapshotStore(options.databasePath, options.busyTimeoutMs ?? 200, logger, openReader);
  const keysStore = new KeysStore(options.keysDatabasePath ?? keysPathFor(options.databasePath), options.busyTimeoutMs ?? 200, logger);
  const engine = options.engine ?? new SqliteFtsEngine();
  const defaults = defaultAppSettings();
  const app = createApp({
    ...defaults,
    ...options.deps,
    store,
    keysStore,
    engine,
    logger,
    clock: options.clock,
    rateLimit: options.rateLimit ?? options.deps?.rateLimit ?? defaults.rateLimit,
    processes: options.processes ?? options.deps?.processes ?? defaults.processes,
    onResponse: options.onResponse ?? options.deps?.onResponse,
    responseCache: options.responseCache,
    responseCacheBytes: options.responseCacheBytes ?? options.deps?.responseCacheBytes ?? defaults.responseCacheBytes,
    publicBaseUrl: options.publicBaseUrl ?? options.deps?.publicBaseUrl ?? defaults.publicBaseUrl,
    fastPath: options.fastPath ?? options.deps?.fastPath ?? fastPathEnabled(process.env),
  });
  const server: Server = createApiServer(app, { ...DEFAULT_SERVER_LIMITS, ...options.serverLimits }, logger);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    app,
    url,
    request: supertest(url),
    store,
    keysStore,
    logs: lines,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await engine.close();
      store.close();
      keysStore.close();
    },
  };
}

/**
 * Runs `fn` on a writer connection to the keys database of the snapshot at `databasePath`
 * (created when missing), as the CLI would, and closes it.
 */
export function withKeys<T>(databasePath: string, fn: (db: KeysDb) => T, keysDatabasePath = keysPathFor(databasePath)): T {
  const { db } = openKeysWriter(keysDatabasePath, { busyTimeoutMs: 5_000, create: true });
  try {
    return fn(db);
  } finally {
    db.$client.close();
  }
}

/** Creates a partner key in the keys database beside the snapshot at `databasePath`, as the CLI would. */
export function addKey(databasePath: string, partner = 'Test Partner', options: KeyOptions = {}): { id: number; key: string } {
  const created = withKeys(databasePath, (db) => createKey(db, partner, () => Date.now(), options));
  return { id: created.id, key: created.key };
}
