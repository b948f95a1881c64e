import { once } from 'node:events';
import { createApp } from './app.js';
import { loadApiConfig } from './config.js';
import { SnapshotStore } from './db/snapshot-store.js';
import { createApiServer } from './http/server-limits.js';
import { createLogger } from './logger.js';
import { runMain } from './main-guard.js';
import { createSearchEngine } from './search/create-engine.js';

runMain(async () => {
  const config = loadApiConfig(process.env);
  const logger = createLogger({ level: config.logLevel, name: 'api' });
  const store = new SnapshotStore(config.databasePath, config.busyTimeoutMs, logger);
  const engine = createSearchEngine(config.search, logger);
  const app = createApp({ store, engine, logger, responseCacheBytes: config.responseCacheBytes, rateLimit: config.rateLimit });

  const server = createApiServer(app, config.serverLimits, logger).listen(config.port, config.host);
  server.on('error', (error: NodeJS.ErrnoException) => {
    const reason = error.code === 'EADDRINUSE' ? `port ${config.port} is already in use (set PORT)` : error.message;
    process.stderr.write(`Cannot start the API on ${config.host}:${config.port}: ${reason}\n`);
    process.exit(1);
  });
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info({ host: config.host, port, search: engine.name }, `API listening on http://${config.host}:${port}`);
  // Try the store once at start so the operator sees its state in the log right away.
  try {
    store.session();
  } catch {
    // Already logged by the store; requests answer 503 until it comes back.
  }

  const stop = (signal: string) => {
    logger.info({ signal }, 'stopping: finishing requests in flight');
    server.close(() => {
      void engine.close().finally(() => {
        store.close();
        logger.flush();
        process.exit(0);
      });
    });
    server.closeIdleConnections();
    // Keep-alive clients could hold the process open: give requests 10 s, then leave.
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
});
