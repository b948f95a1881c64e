import { Command, CommanderError } from 'commander';
import { loadWorkerConfig, requireCms, type WorkerConfig } from '../src/config/worker.js';
import { openWriter, type Db } from '../src/db/sqlite/connection.js';
import { getWorkerState, recentRuns, setWorkerState } from '../src/db/snapshot/sync-runs.js';
import { UsageError } from '../src/errors.js';
import { createLogger, type Logger } from '../src/logger.js';
import { runMain } from '../src/lib/main-guard.js';
import type { SearchIndexer } from '../src/search/indexer.js';
import { formatUtcSeconds, systemClock } from '../src/lib/time.js';
import { createHttpCmsAdapter } from './cms/http-adapter.js';
import { createCmsHttpClient } from './cms/http-client.js';
import { runSync, type SyncDeps, type SyncKind } from './run-sync.js';
import { scheduleSyncs, SyncScheduler } from './scheduler.js';
import { snapshotOpenFailure } from './snapshot-failure.js';
import { formatLastWebhook, formatRuns, LAST_WEBHOOK, runsAsJson } from './status.js';
import { createWebhookServer, WEBHOOK_PATH } from './webhook.js';

/*
 * The worker's entry point: parses the command line, builds the dependencies and hands over
 * to runSync (one pass) or the scheduler (the long-lived process). Nothing else happens here.
 * The metrics endpoint (prom-client) and the Meilisearch indexer are imported only when
 * configured: loaded always, they were 118 modules and 2-3 MB of peak memory that a sync
 * without them never used (docs/operations.md#the-sync-workers-memory).
 */

interface Options {
  once?: boolean;
  full?: boolean;
  status?: boolean;
  reindex?: boolean;
  json?: boolean;
}

function parseArgs(argv: string[]): Options {
  const cli = new Command('sync')
    .description('Sync the CMS into the SQLite snapshot (and the search index)')
    .option('--once', 'run one sync and exit (full until a sync has succeeded, else incremental)')
    .option('--full', 'with --once: force a full sync')
    .option('--reindex', 'rebuild the search indexes from the snapshot, without calling the CMS')
    .option('--status', 'print the last runs and exit')
    .option('--json', 'with --status: print JSON')
    .argument('[command]', '"status": the same as --status')
    .exitOverride()
    .configureOutput({ outputError: () => {} });
  try {
    cli.parse(argv);
  } catch (error) {
    if (error instanceof CommanderError && error.exitCode === 0) process.exit(0);
    throw new UsageError((error as Error).message.replace(/^error: /, ''));
  }
  const options = cli.opts<Options>();
  const command = cli.args[0];
  if (command !== undefined && command !== 'status') throw new UsageError(`unknown command "${command}" (did you mean --status?)`);
  if (command === 'status') options.status = true;
  if (options.full && !options.once) throw new UsageError('--full only goes with --once');
  return options;
}

/**
 * The snapshot at DATABASE_PATH, or one line saying why not. Only a sync may create it:
 * --status and --reindex read or rebuild from an existing one.
 */
function openSnapshot(config: WorkerConfig, create: boolean, allowNewer: boolean): Db {
  const { databasePath, busyTimeoutMs } = config;
  try {
    return openWriter(databasePath, { busyTimeoutMs, create, allowNewer });
  } catch (error) {
    throw snapshotOpenFailure(error, databasePath, busyTimeoutMs) ?? error;
  }
}

function deps(config: WorkerConfig, db: Db, logger: Logger, withCms: boolean, indexer: SearchIndexer | undefined): SyncDeps {
  const cmsConfig = withCms ? requireCms(config) : config.cms;
  return {
    db,
    cms: cmsConfig
      ? createHttpCmsAdapter({
          client: createCmsHttpClient({
            baseUrl: cmsConfig.baseUrl,
            token: cmsConfig.token,
            timeoutMs: cmsConfig.timeoutMs,
            maxAttempts: cmsConfig.maxAttempts,
            retryBudgetMs: cmsConfig.retryBudgetMs,
            baseDelayMs: 500,
            maxDelayMs: 30_000,
            maxResponseBytes: cmsConfig.maxResponseBytes,
            logger,
          }),
        })
      : undefined,
    logger,
    clock: systemClock,
    pageSize: cmsConfig?.pageSize ?? 100,
    overlapSeconds: config.overlapSeconds,
    feedRetentionDays: config.feedRetentionDays,
    searchLists: config.searchLists,
    indexer,
    showProgress: process.stdout.isTTY === true,
  };
}

/**
 * Ctrl-C on `npm run sync` delivers SIGINT twice within milliseconds (from the terminal to the
 * whole process group, and from npm forwarding it): a repeat this soon after the first signal
 * is that same stop and is ignored, as the API ignores one during its drain. A signal sent
 * later means "stop now" and exits 1 at once.
 */
const REPEATED_SIGNAL_WINDOW_MS = 2_000;

function onStopSignals(logger: Logger, stop: (signal: string) => void): void {
  let firstAt: number | undefined;
  const handle = (signal: string) => {
    if (firstAt === undefined) {
      firstAt = Date.now();
      stop(signal);
    } else if (Date.now() - firstAt < REPEATED_SIGNAL_WINDOW_MS) {
      logger.info({ signal }, 'already stopping: repeated signal ignored');
    } else {
      logger.warn({ signal }, 'second signal: exiting now');
      logger.flush();
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => handle('SIGTERM'));
  process.on('SIGINT', () => handle('SIGINT'));
}

async function once(config: WorkerConfig, db: Db, logger: Logger, kind: SyncKind | 'auto'): Promise<void> {
  const controller = new AbortController();
  // Not process.once: the second SIGINT of a Ctrl-C would then kill the process by default.
  onStopSignals(logger, () => controller.abort());
  const indexer = await searchIndexer(config, logger);
  const summary = await runSync({ ...deps(config, db, logger, kind !== 'reindex', indexer), signal: controller.signal }, kind);
  // Stopped on purpose: the run is rolled back and recorded as stopped, and that is no failure
  // of the process (a deploy or a person stopping it expects exit code 0, as the daemon gives).
  if (summary.status === 'failed' && !controller.signal.aborted) throw new UsageError(`sync failed: ${summary.error}`);
}

async function daemon(config: WorkerConfig, db: Db, logger: Logger): Promise<void> {
  const controller = new AbortController();
  const base = { ...deps(config, db, logger, true, await searchIndexer(config, logger)), signal: controller.signal };
  // Both ports are bound before any tick or run starts: one that cannot be bound ends the start
  // with runMain's one line and exit code 1, with nothing started. Started first, a sync would
  // outlive this function (the database closed under it) and the cron tasks would keep a
  // process alive whose every run crashes.
  const metrics = await serveWorkerMetrics(config, logger);
  const scheduler = new SyncScheduler(async (kind) => {
    const summary = await runSync(base, kind);
    metrics?.record(summary, Date.now());
    return summary;
  }, logger);
  let webhook: Awaited<ReturnType<typeof listenForWebhooks>> | undefined;
  try {
    webhook = config.webhook ? await listenForWebhooks(config, db, logger, scheduler) : undefined;
  } catch (error) {
    // An open metrics port would keep the process alive after runMain's exit code 1.
    await metrics?.close();
    throw error;
  }
  const tasks = scheduleSyncs(scheduler, config.schedule, logger);
  // Listening for signals before the first run starts: the run's synchronous start (its
  // sync_runs row) is visible to others, and a signal then must roll it back, not kill us.
  const stopped = new Promise<void>((resolve) => {
    onStopSignals(logger, (signal) => {
      logger.info({ signal }, 'stopping: the current run, if any, is rolled back');
      for (const task of tasks) void task.stop();
      webhook?.close();
      webhook?.closeAllConnections();
      controller.abort();
      void scheduler.stop().then(() => metrics?.close()).then(resolve);
    });
  });
  logger.info(
    { incremental: config.schedule.incremental, full: config.schedule.full },
    'sync worker started; first sync now, then on schedule',
  );
  scheduler.request('auto');
  await stopped;
}

/** The CMS webhook (opt-in): each valid call starts an incremental sync, or queues one. */
async function listenForWebhooks(config: WorkerConfig, db: Db, logger: Logger, scheduler: SyncScheduler) {
  const { port, host, secret, toleranceSeconds, maxBodyBytes } = config.webhook!;
  const server = createWebhookServer({
    secret,
    toleranceSeconds,
    maxBodyBytes,
    clock: systemClock,
    logger,
    trigger: () => scheduler.triggered(),
    received: ({ receivedAt, status, outcome }) => {
      logger.info({ status, outcome }, `CMS webhook received: ${outcome}`);
      // Only for accepted calls; a failure here is logged by the webhook server (webhook.ts).
      const at = formatUtcSeconds(receivedAt);
      setWorkerState(db, LAST_WEBHOOK, JSON.stringify({ received_at: at, status, outcome }), at);
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new UsageError(`Cannot listen for CMS webhooks on ${host}:${port}: ${webhookBindFailure(error, config)}`)),
    );
    server.listen(port, host, resolve);
  });
  const bound = (server.address() as { port: number }).port;
  logger.info({ webhookPort: bound, host }, `CMS webhook listening on http://${host}:${bound}${WEBHOOK_PATH}`);
  return server;
}

function webhookBindFailure(error: NodeJS.ErrnoException, config: WorkerConfig): string {
  const { port } = config.webhook!;
  // The metrics are bound first: the same port in both shows up here.
  if (error.code === 'EADDRINUSE' && port !== 0 && config.metrics?.port === port) {
    return `port ${port} is already taken by WORKER_METRICS_PORT (give WEBHOOK_PORT another port)`;
  }
  if (error.code === 'EADDRINUSE') return `port ${port} is already in use (set WEBHOOK_PORT to a free port)`;
  if (error.code === 'EACCES') return `not allowed to listen on port ${port} (set WEBHOOK_PORT to another port)`;
  if (error.code === 'EADDRNOTAVAIL') return 'no such address on this host (check WEBHOOK_HOST)';
  return `${error.message} (check WEBHOOK_HOST and WEBHOOK_PORT)`;
}

/** The external search index to follow (Meilisearch), when one is configured. */
async function searchIndexer(config: WorkerConfig, logger: Logger): Promise<SearchIndexer | undefined> {
  if (!config.search.meilisearch) return undefined;
  const { createSearchIndexer } = await import('../src/search/create-engine.js');
  return createSearchIndexer(config.search, logger);
}

/** The daemon's metrics on WORKER_METRICS_PORT, when set. */
async function serveWorkerMetrics(config: WorkerConfig, logger: Logger) {
  if (!config.metrics) return undefined;
  const [{ closeMetricsServer, createRegistry, portOf, registrySource, serveMetrics }, { WorkerMetrics }] = await Promise.all([
    import('../src/observability/registry.js'),
    import('../src/observability/worker-metrics.js'),
  ]);
  const registry = createRegistry();
  const metrics = new WorkerMetrics(registry);
  const server = await serveMetrics(registrySource(registry), config.metrics.port, config.metrics.host, 'WORKER_METRICS_PORT');
  logger.info({ metricsPort: portOf(server) }, `worker metrics on http://${config.metrics.host}:${portOf(server)}/metrics`);
  return { record: metrics.record.bind(metrics), close: () => closeMetricsServer(server) };
}

runMain(async () => {
  const options = parseArgs(process.argv);
  const config = loadWorkerConfig(process.env);
  // Checked before the database is opened (and perhaps created) for nothing.
  if (!options.status && !options.reindex) requireCms(config);
  const logger = createLogger({ level: config.logLevel, name: 'worker' });
  // Only --status, which writes nothing, may read a newer version's snapshot.
  const db = openSnapshot(config, !options.status && !options.reindex, options.status === true);
  try {
    if (options.status) {
      const runs = recentRuns(db, 20);
      const webhook = getWorkerState(db, LAST_WEBHOOK);
      // --json stays the array of runs that scripts already read; the last webhook is in the text.
      const lines = options.json ? [JSON.stringify(runsAsJson(runs))] : [...formatRuns(runs), '', formatLastWebhook(webhook)];
      process.stdout.write(`${lines.join('\n')}\n`);
    } else if (options.reindex) {
      await once(config, db, logger, 'reindex');
    } else if (options.once) {
      await once(config, db, logger, options.full ? 'full' : 'auto');
    } else {
      await daemon(config, db, logger);
    }
  } finally {
    db.$client.close();
    logger.flush();
  }
});
