import cluster from 'node:cluster';
import { runApiProcess } from './api-process.js';
import { runClusterPrimary } from './cluster-primary.js';
import { loadApiConfig } from './config/api.js';
import { runMain } from './lib/main-guard.js';

// The API's entry point: one process, or with WEB_CONCURRENCY > 1 a primary and its workers.
runMain(async () => {
  const config = loadApiConfig(process.env);
  if (config.processes > 1 && cluster.isPrimary) await runClusterPrimary(config);
  else await runApiProcess(config, { inCluster: cluster.isWorker });
});
