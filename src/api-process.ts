import { once } from 'node:events';
import { collectStartupGarbage } from './lib/startup-collection.js';
import { createApp } from './app.js';
import { isRetire } from './cluster-messages.js';
import type { ApiConfig } from './config/api.js';
import { KeysStore } from './db/keys/keys-store.js';
import { SnapshotStore } from './db/snapshot/snapshot-store.js';
import { openReader } from './db/sqlite/connection.js';
import { drainable } from './http/server/drain.js';
import { createApiServer } from './http/server/server-limits.js';
import { createLogger, endLogOutput, type Logger } from './logger.js';
import { ApiMetrics } from './observability/api-metrics.js';
import { closeMetricsServer, createRegistry, portOf, registrySource, serveMetrics } from './observability/registry.js';
import { createApiSearchEngine } from './search/create-engine.js';

/**
 * One API process: opens the store and the search engine, listens, and drains on SIGTERM or
 * SIGINT. Alone (WEB_CONCURRENCY=1) it also serves its metrics; in a cluster the primary
 * serves them for all processes (src/cluster-primary.ts) and this process only answers its
 * requests for them.
 */
export async function runApiProcess(config: Readonly<ApiConfig>, options: { inCluster: boolean }): Promise<void> {
  const registry = config.metrics ? createRegistry({ inClusterWorker: options.inCluster }) : undefined;
  // Bound before anything else starts (search threads, the partners' port): a METRICS_PORT
  // that cannot be bound then ends the start with runMain's one line and exit code 1, never
  // an API that serves partners without metrics or signal handlers.
  const metricsServer =
    registry && config.metrics && !options.inCluster
      ? await serveMetrics(registrySource(registry), config.metrics.port, config.metrics.host)
      : undefined;
  const logger = createLogger({ level: config.logLevel, name: 'api', batched: true });
  const store = new SnapshotStore(config.databasePath, config.busyTimeoutMs, logger, openReader);
  const keysStore = new KeysStore(config.keysDatabasePath, config.busyTimeoutMs, logger);
  const engine = createApiSearchEngine(config, logger);
  const app = createApp({
    store,
    keysStore,
    engine,
    logger,
    responseCacheBytes: config.responseCacheBytes,
    rateLimit: config.rateLimit,
    metrics: registry ? new ApiMetrics(registry) : undefined,
    snapshotMaxAgeSeconds: config.snapshotMaxAgeSeconds,
    processes: config.rateLimitProcesses,
    trustProxy: config.trustProxy,
    publicBaseUrl: config.publicBaseUrl,
    fastPath: config.fastPath,
  });

  // A stop before the port is open has nothing to drain: it ends the start there, exit 0. One
  // listener per signal for the whole life of the process, pointed at the drain once the port
  // is open: removing a signal's last listener drops a signal that is already on its way.
  let onSignal = (signal: string) => {
    logger.info({ signal }, 'stopped before listening');
    setTimeout(() => process.exit(0), 1_000).unref();
    endLogOutput(logger, () => process.exit(0));
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  // The cluster primary's rolling restart (src/cluster-primary.ts): drain at once, no wait for a
  // balancer, since the other processes keep the port open and /health answering.
  if (options.inCluster) process.on('message', (message) => isRetire(message) && onSignal('retire'));
  // In a cluster SIGHUP is the primary's (a rolling restart, src/cluster-primary.ts). Sent to
  // the whole process group, its default action would end every process at once.
  if (options.inCluster) process.on('SIGHUP', () => logger.debug('SIGHUP ignored: the cluster primary restarts the processes'));

  // Before the port opens, so that no partner waits for them: the search threads start and the
  // views the requests read are built, about 0.4 s for 100,000 articles; the first requests
  // after a start used to pay for both (a second or more). This also shows the operator the
  // store's state in the log: a missing snapshot is logged here. The port opens when the
  // threads have built their views and rehearsed, so that /health answering means searches
  // are answered at full speed too (about 1 s after the views on 110,000 articles and one
  // core), or after SEARCH_START_WAIT_MS (15 s) at most: a slow start is logged, never a failed one.
  const threadsStarted = engine.start?.();
  app.warm();
  await withinStartWait(threadsStarted, logger);
  collectStartupGarbage();
  // Once more after that collection, as the search threads do (src/search/sqlite/pool/worker.ts):
  // the work first done after a full collection was the slower for it, and a partner's would be.
  app.warm(1);

  const server = createApiServer(app, config.serverLimits, logger);
  const drain = drainable(server);
  server.listen(config.port, config.host);
  server.on('error', (error: NodeJS.ErrnoException) => {
    process.stderr.write(`Cannot start the API on ${config.host}:${config.port}: ${partnersPortFailure(error, config)}\n`);
    process.exit(1);
  });
  await once(server, 'listening');
  const port = portOf(server);
  logger.info(
    { host: config.host, port, search: engine.name, ...(metricsServer ? { metricsPort: portOf(metricsServer) } : {}) },
    `API listening on http://${config.host}:${port}`,
  );
  // Lines are written once per turn of the event loop: the operator (and a supervisor waiting
  // for the line) sees the start at once.
  logger.flush();

  let stopping = false;
  let endDelay: (() => void) | undefined;
  const stop = (signal: string) => {
    // A signal sent to the whole process group reaches a cluster worker twice (directly and
    // from the primary): the stop already under way carries on. SIGINT (Ctrl-C, or a second
    // stop from an impatient operator) ends a SIGTERM's wait for the balancer at once.
    if (stopping) {
      if (signal === 'SIGINT') endDelay?.();
      return;
    }
    stopping = true;
    app.stopNotice.announce();
    // Only SIGTERM waits for a balancer (src/http/server/stop-notice.ts): SIGINT is an operator
    // at a terminal, and `retire` the cluster primary's rolling restart, whose port stays open.
    const delayMs = signal === 'SIGTERM' ? app.stopNotice.delayMs(config.shutdownDelayMs) : 0;
    const delayed = new Promise<void>((resolve) => {
      if (delayMs === 0) return resolve();
      logger.info({ signal, delayMs }, 'stopping: /health answers 503 draining while requests are still served');
      logger.flush();
      const timer = setTimeout(resolve, delayMs);
      endDelay = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    void delayed
      .then(() => {
        logger.info({ signal }, 'stopping: answering requests in flight with Connection: close');
        const drained = drain.drain(config.shutdownTimeoutMs);
        // After the drain has marked every answer Connection: close: the change feed's waiting
        // requests are answered now (their page as it is), so they never hold the stop.
        app.stopWaiting();
        return drained;
      })
      .then(async (result) => {
        if (result === 'timed out') logger.warn({ timeoutMs: config.shutdownTimeoutMs }, 'drain timed out: closed the remaining connections');
        await closeMetricsServer(metricsServer);
        await engine.close();
      })
      .finally(() => {
        store.close();
        // Writes the last-used times recorded since the last minute's batch.
        keysStore.close();
        logger.info('stopped');
        // Every line is written before the exit, waiting at most a second for a slow reader.
        setTimeout(() => process.exit(0), 1_000).unref();
        endLogOutput(logger, () => process.exit(0));
      });
  };
  onSignal = stop;
}

/** How long the port waits for the search threads' start: longer, they finish it serving. */
const SEARCH_START_WAIT_MS = 15_000;

async function withinStartWait(started: Promise<void> | undefined, logger: Logger): Promise<void> {
  if (!started) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), SEARCH_START_WAIT_MS);
  });
  const outcome = await Promise.race([started, late]);
  clearTimeout(timer);
  if (outcome === 'late') logger.warn({ waitedMs: SEARCH_START_WAIT_MS }, 'search threads still starting: opening the port, the first searches wait for them');
}

function partnersPortFailure(error: NodeJS.ErrnoException, config: Readonly<ApiConfig>): string {
  if (error.code !== 'EADDRINUSE') return error.message;
  // The metrics are bound first: a METRICS_PORT equal to PORT shows up here, and it is the
  // metrics port that should move (the partners already use PORT).
  if (config.metrics?.port === config.port) return `port ${config.port} is already taken by METRICS_PORT: give the metrics another port`;
  return `port ${config.port} is already in use (set PORT)`;
}
