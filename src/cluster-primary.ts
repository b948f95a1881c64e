import cluster, { type Worker } from 'node:cluster';
import { RETIRE } from './cluster-messages.js';
import type { ApiConfig } from './config/api.js';
import { createLogger } from './logger.js';
import { clusterSource, closeMetricsServer, portOf, serveMetrics } from './observability/registry.js';

/**
 * WEB_CONCURRENCY > 1: this process only supervises. It forks that many API processes, which
 * share the listening port (node:cluster hands connections out in turn), serves their
 * metrics summed on METRICS_PORT, replaces a process that dies, on SIGHUP replaces them one at
 * a time (a rolling restart, which loads the code now on disk), and on SIGTERM or SIGINT
 * passes the signal on and exits once every process has drained.
 */
export async function runClusterPrimary(config: Readonly<ApiConfig>): Promise<void> {
  const logger = createLogger({ level: config.logLevel, name: 'api-primary' });
  const metricsServer = config.metrics ? await serveMetrics(clusterSource(), config.metrics.port, config.metrics.host) : undefined;
  let stopping = false;
  const started = new Set<Worker>();
  /** Processes told to stop by a rolling restart: their exit is expected, not replaced. */
  const retiring = new Set<Worker>();

  /**
   * Forks one API process. Resolves true once it listens, false if it exits first. A process
   * that never listened (port taken, bad file) is not forked again, which would loop: at the
   * first start that stops the cluster; in a rolling restart it abandons the restart instead,
   * and the processes still running keep serving.
   */
  const fork = (purpose: 'start' | 'replace' | 'restart'): Promise<boolean> =>
    new Promise((resolve) => {
      const worker = cluster.fork();
      worker.once('listening', () => {
        started.add(worker);
        resolve(true);
      });
      worker.once('exit', (code, signal) => {
        const wasUp = started.delete(worker);
        const stoppedOnPurpose = retiring.delete(worker);
        if (!wasUp) resolve(false);
        if (stopping) return;
        if (stoppedOnPurpose) {
          logger.info({ stoppedPid: worker.process.pid, code, signal }, 'an API process stopped after its replacement started (rolling restart)');
          return;
        }
        if (!wasUp) {
          if (purpose === 'restart') {
            logger.error({ failedPid: worker.process.pid, code }, 'a new API process failed to start: rolling restart abandoned, the running processes keep serving');
            return;
          }
          process.stderr.write(`An API process failed to start (exit code ${code}); stopping.\n`);
          stop('startup failure', 1);
          return;
        }
        // `pid` is this process's own (every line carries it): the dead one's is `deadPid`.
        logger.error({ deadPid: worker.process.pid, code, signal }, 'an API process died: starting another');
        void fork('replace');
      });
    });

  let restarting = false;
  /**
   * SIGHUP: each process in turn is replaced by a new one, which listens before the old one is
   * told to drain (RETIRE: at once, without SIGTERM's wait for a balancer, since the port stays
   * open and the balancer must not see /health fail), so the port always has a listener and no connection is refused;
   * the next waits until the old one has exited, so capacity never drops by more than one.
   * node:cluster gives a connection a process that has just closed its server to another.
   */
  const rollingRestart = async () => {
    if (stopping) return;
    if (restarting) {
      logger.warn('SIGHUP during a rolling restart: ignored, the restart under way carries on');
      return;
    }
    restarting = true;
    const old = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && started.has(w));
    logger.info({ processes: old.length }, 'rolling restart: replacing the API processes one at a time');
    try {
      for (const worker of old) {
        if (stopping) return;
        if (worker.isDead()) continue;
        if (!(await fork('restart'))) return;
        if (stopping) return;
        if (worker.isDead()) continue;
        retiring.add(worker);
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        worker.send(RETIRE);
        await exited;
      }
      logger.info({ processes: started.size }, 'rolling restart done');
    } finally {
      restarting = false;
    }
  };

  const stop = (reason: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason, processes: Object.keys(cluster.workers ?? {}).length }, 'stopping: draining every API process');
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    // Each process bounds its own wait for the balancer and its drain; this bounds the whole,
    // should one hang.
    const deadline = setTimeout(() => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
    }, config.shutdownDelayMs + config.shutdownTimeoutMs + 5_000);
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

  for (let i = 0; i < config.processes; i++) void fork('start');
  logger.info(
    { processes: config.processes, port: config.port, ...(metricsServer ? { metricsPort: portOf(metricsServer) } : {}) },
    `API cluster: ${config.processes} processes on port ${config.port}`,
  );
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => void rollingRestart());
}
