import cluster, { type Worker } from 'node:cluster';
import type { ApiConfig } from './config/api.js';
import { createLogger } from './logger.js';
import { clusterSource, closeMetricsServer, portOf, serveMetrics } from './observability/registry.js';

/**
 * WEB_CONCURRENCY > 1: this process only supervises. It forks that many API processes, which
 * share the listening port (node:cluster hands connections out in turn), serves their
 * metrics summed on METRICS_PORT, replaces a process that dies, and on SIGTERM or SIGINT
 * passes the signal on and exits once every process has drained.
 */
export async function runClusterPrimary(config: Readonly<ApiConfig>): Promise<void> {
  const logger = createLogger({ level: config.logLevel, name: 'api-primary' });
  const metricsServer = config.metrics ? await serveMetrics(clusterSource(), config.metrics.port, config.metrics.host) : undefined;
  let stopping = false;
  const started = new Set<Worker>();

  const fork = () => {
    const worker = cluster.fork();
    worker.once('listening', () => started.add(worker));
    worker.once('exit', (code, signal) => {
      const wasUp = started.delete(worker);
      if (stopping) return;
      if (!wasUp) {
        // A process that never listened (port taken, bad file): forking again would loop.
        process.stderr.write(`An API process failed to start (exit code ${code}); stopping.\n`);
        stop('startup failure', 1);
        return;
      }
      // `pid` is this process's own (every line carries it): the dead one's is `deadPid`.
      logger.error({ deadPid: worker.process.pid, code, signal }, 'an API process died: starting another');
      fork();
    });
  };

  const stop = (reason: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason, processes: Object.keys(cluster.workers ?? {}).length }, 'stopping: draining every API process');
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    // Each process bounds its own drain; this bounds the whole, should one hang.
    const deadline = setTimeout(() => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
    }, config.shutdownTimeoutMs + 5_000);
    deadline.unref();
    const exitWhenAllGone = () => {
      if (Object.keys(cluster.workers ?? {}).length > 0) return;
      void closeMetricsServer(metricsServer).finally(() => {
        logger.info('stopped');
        logger.flush();
        process.exit(exitCode);
      });
    };
    cluster.on('exit', exitWhenAllGone);
    exitWhenAllGone();
  };

  for (let i = 0; i < config.processes; i++) fork();
  logger.info(
    { processes: config.processes, port: config.port, ...(metricsServer ? { metricsPort: portOf(metricsServer) } : {}) },
    `API cluster: ${config.processes} processes on port ${config.port}`,
  );
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
