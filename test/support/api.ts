import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import supertest from 'supertest';
import { createApp, type AppDeps, type App } from '../../src/app.js';
import { createApiServer, DEFAULT_SERVER_LIMITS, type ServerLimits } from '../../src/http/server-limits.js';
import { openWriter } from '../../src/db/connection.js';
import { SnapshotStore } from '../../src/db/snapshot-store.js';
import { createKey } from '../../src/keys/manage.js';
import { createLogger, type Logger } from '../../src/logger.js';
import type { SearchEngine } from '../../src/search/engine.js';
import { SqliteFtsEngine } from '../../src/search/sqlite-fts.js';
import type { Clock } from '../../src/time.js';

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
  logs: string[];
  close(): Promise<void>;
}

/** Starts the real app on 127.0.0.1 and an ephemeral port, over a real snapshot file. */
export async function startApi(options: {
  databasePath: string;
  clock?: Clock;
  engine?: SearchEngine;
  busyTimeoutMs?: number;
  rateLimit?: AppDeps['rateLimit'];
  processes?: number;
  onResponse?: AppDeps['onResponse'];
  serverLimits?: Partial<ServerLimits>;
}): Promise<TestApi> {
  const { logger, lines } = memoryLogger();
  const store = new SnapshotStore(options.databasePath, options.busyTimeoutMs ?? 200, logger);
  const engine = options.engine ?? new SqliteFtsEngine();
  const app = createApp({
    store,
    engine,
    logger,
    clock: options.clock,
    rateLimit: options.rateLimit,
    processes: options.processes,
    onResponse: options.onResponse,
  });
  const server: Server = createApiServer(app, { ...DEFAULT_SERVER_LIMITS, ...options.serverLimits }, logger);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    app,
    url,
    request: supertest(url),
    store,
    logs: lines,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await engine.close();
      store.close();
    },
  };
}

/** Creates a partner key directly in the database file, as the CLI would. */
export function addKey(databasePath: string, partner = 'Test Partner'): { id: number; key: string } {
  const db = openWriter(databasePath, { busyTimeoutMs: 5_000 });
  try {
    const created = createKey(db, partner, () => Date.now());
    return { id: created.id, key: created.key };
  } finally {
    db.$client.close();
  }
}
