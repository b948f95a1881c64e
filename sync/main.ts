import { Command, CommanderError } from 'commander';
import cron from 'node-cron';
import { loadWorkerConfig, requireCms, type WorkerConfig } from '../src/config.js';
import { openWriter, type Db } from '../src/db/connection.js';
import { getWorkerState, recentRuns, setWorkerState } from '../src/db/sync-runs.js';
import { UsageError } from '../src/errors.js';
import { createLogger, type Logger } from '../src/logger.js';
import { runMain } from '../src/main-guard.js';
import { closeMetricsServer, createRegistry, portOf, registrySource, serveMetrics } from '../src/observability/registry.js';
import { WorkerMetrics } from '../src/observability/worker-metrics.js';
import { createSearchIndexer } from '../src/search/create-engine.js';
import { formatUtcSeconds, systemClock } from '../src/time.js';
import { createHttpCmsAdapter } from './cms/http-adapter.js';
import { createCmsHttpClient } from './cms/http-client.js';
import { runSync, type SyncDeps, type SyncKind } from './run-sync.js';
import { SyncScheduler } from './scheduler.js';
import { formatLastWebhook, formatRuns, LAST_WEBHOOK, runsAsJson } from './status.js';
import { createWebhookServer, WEBHOOK_PATH } from './webhook.js';

/*
 * The worker's entry point: parses the command line, builds the dependencies and hands over
 * to runSync (one pass) or the scheduler (the long-lived process). Nothing else happens here.
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

function deps(config: WorkerConfig, db: Db, logger: Logger, withCms: boolean): SyncDeps {
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
    indexer: createSearchIndexer(config.search, logger),
    showProgress: process.stdout.isTTY === true,
  };
}

async function once(config: WorkerConfig, db: Db, logger: Logger, kind: SyncKind | 'auto'): Promise<void> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  const summary = await runSync({ ...deps(config, db, logger, kind !== 'reindex'), signal: controller.signal }, kind);
  // Stopped on purpose: the run is rolled back and recorded as stopped, and that is no failure
  // of the process (a deploy or a person stopping it expects exit code 0, as the daemon gives).
  if (summary.status === 'failed' && !controller.signal.aborted) throw new UsageError(`sync failed: ${summary.error}`);
}

async function daemon(config: WorkerConfig, db: Db, logger: Logger): Promise<void> {
  const controller = new AbortController();
  const base = { ...deps(config, db, logger, true), signal: controller.signal };
  const metrics = await serveWorkerMetrics(config, logger);
  const scheduler = new SyncScheduler(async (kind) => {
    const summary = await runSync(base, kind);
    metrics?.record(summary, Date.now());
    return summary;
  }, logger);
  const tasks = [
    cron.schedule(config.schedule.incremental, () => scheduler.request('incremental'), { name: 'incremental sync' }),
    cron.schedule(config.schedule.full, () => scheduler.request('full'), { name: 'full sync' }),
  ];
  logger.info(
    { incremental: config.schedule.incremental, full: config.schedule.full },
    'sync worker started; first sync now, then on schedule',
  );
  scheduler.request('auto');
  const webhook = config.webhook ? await listenForWebhooks(config, db, logger, scheduler) : undefined;

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) {
        logger.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      stopping = true;
      logger.info({ signal }, 'stopping: the current run, if any, is rolled back');
      for (const task of tasks) void task.stop();
      webhook?.close();
      webhook?.closeAllConnections();
      controller.abort();
      void scheduler.stop().then(() => metrics?.close()).then(resolve);
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });
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
      const at = formatUtcSeconds(receivedAt);
      setWorkerState(db, LAST_WEBHOOK, JSON.stringify({ received_at: at, status, outcome }), at);
      logger.info({ status, outcome }, `CMS webhook received: ${outcome}`);
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new UsageError(`cannot listen for webhooks on ${host}:${port}: ${error.code === 'EADDRINUSE' ? 'port in use (set WEBHOOK_PORT)' : error.message}`)),
    );
    server.listen(port, host, resolve);
  });
  const bound = (server.address() as { port: number }).port;
  logger.info({ webhookPort: bound, host }, `CMS webhook listening on http://${host}:${bound}${WEBHOOK_PATH}`);
  return server;
}

/** The daemon's metrics on WORKER_METRICS_PORT, when set. */
async function serveWorkerMetrics(config: WorkerConfig, logger: Logger) {
  if (!config.metrics) return undefined;
  const registry = createRegistry();
  const metrics = new WorkerMetrics(registry);
  const server = await serveMetrics(registrySource(registry), config.metrics.port, config.metrics.host);
  logger.info({ metricsPort: portOf(server) }, `worker metrics on http://${config.metrics.host}:${portOf(server)}/metrics`);
  return { record: metrics.record.bind(metrics), close: () => closeMetricsServer(server) };
}

runMain(async () => {
  const options = parseArgs(process.argv);
  const config = loadWorkerConfig(process.env);
  // Checked before the database is opened (and perhaps created) for nothing.
  if (!options.status && !options.reindex) requireCms(config);
  const logger = createLogger({ level: config.logLevel, name: 'worker' });
  const db = openWriter(config.databasePath, { busyTimeoutMs: config.busyTimeoutMs });
  try {
    if (options.status) {
      const runs = recentRuns(db, 20);
      const webhook = getWorkerState(db, LAST_WEBHOOK);
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
