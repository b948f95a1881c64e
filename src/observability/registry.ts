import { createServer, type Server } from 'node:http';
import { AggregatorRegistry, Registry, collectDefaultMetrics, type PrometheusContentType } from 'prom-client';
import { ConfigError } from '../errors.js';

/*
 * The one place where Prometheus registries are made and served. The API, the worker and the
 * search pool register their metrics into a registry made here; nothing else formats the
 * exposition text (prom-client does).
 */

export const METRIC_PREFIX = 'syndication_';

/**
 * prom-client's default gauges named like counters. `promtool check metrics` (and Prometheus's
 * naming rules) reserve `_total` for counters, so a scrape that carries them fails the lint;
 * each is only the sum of its per-type gauge, which stays (`sum(nodejs_active_handles)`).
 */
const DEFAULTS_NAMED_LIKE_COUNTERS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/**
 * A registry with the process's default metrics (CPU, memory, event loop lag, handles). In a
 * cluster worker it also answers the primary's requests for its metrics (prom-client's cluster
 * protocol), so the primary can serve one aggregated page for all API processes.
 */
export function createRegistry(options: { inClusterWorker?: boolean } = {}): Registry {
  const registry: Registry = options.inClusterWorker
    ? new AggregatorRegistry<PrometheusContentType>()
    : new Registry();
  if (options.inClusterWorker) AggregatorRegistry.setRegistries(registry);
  collectDefaultMetrics({ register: registry });
  for (const name of DEFAULTS_NAMED_LIKE_COUNTERS) registry.removeSingleMetric(name);
  return registry;
}

/** What a metrics page comes from: one registry, or the aggregate of a cluster's workers. */
export interface MetricsSource {
  contentType: string;
  text(): Promise<string>;
}

export function registrySource(registry: Registry): MetricsSource {
  return { contentType: registry.contentType, text: () => registry.metrics() };
}

/** In the cluster primary: every worker's metrics summed (or per each metric's aggregator). */
export function clusterSource(): MetricsSource {
  const aggregator = new AggregatorRegistry<PrometheusContentType>();
  return { contentType: aggregator.contentType, text: () => aggregator.clusterMetrics() };
}

/**
 * Serves `GET /metrics` on its own port, apart from the partners' port, so that metrics are
 * never public by accident: bind it to loopback or a private interface (METRICS_HOST).
 * A port that cannot be bound is a ConfigError naming METRICS_PORT: one line for the operator.
 */
/**
 * What a scraper needs and no more: a few connections, sent whole and quickly. Without limits
 * (Node's defaults: no connection cap, 60 s for headers, 5 minutes for a request), anyone who
 * can reach METRICS_HOST could hold connections until the process runs out of descriptors; in
 * a cluster that process is the primary, which accepts every partner connection.
 */
export const METRICS_SERVER_LIMITS = { maxConnections: 32, headersTimeoutMs: 5_000, requestTimeoutMs: 10_000 } as const;

export async function serveMetrics(source: MetricsSource, port: number, host: string, portVariable = 'METRICS_PORT'): Promise<Server> {
  const limits = METRICS_SERVER_LIMITS;
  // The timeouts are checked every second rather than every 30 s (Node's default).
  const server = createServer({ headersTimeout: limits.headersTimeoutMs, requestTimeout: limits.requestTimeoutMs, connectionsCheckingInterval: 1_000 }, (req, res) => {
    const path = req.url?.split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found: see /metrics\n');
      return;
    }
    source.text().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': source.contentType, 'Cache-Control': 'no-store' }).end(text);
      },
      () => {
        res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Metrics are unavailable right now.\n');
      },
    );
  });
  // Scrapers keep their connection open; it must never hold the process up at shutdown.
  server.keepAliveTimeout = 1_000;
  server.maxConnections = limits.maxConnections;
  try {
    await listening(server, port, host);
  } catch (error) {
    throw new ConfigError(`Cannot serve metrics on ${host}:${port}: ${bindFailure(error, port, portVariable)}`);
  }
  return server;
}

/**
 * Resolves once the server listens, rejects with the listen error. Not events.once() raced
 * against 'error': once(server, 'listening') itself rejects on 'error', with the raw error,
 * before anything else can turn it into an operator's message.
 */
function listening(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => {
      server.off('listening', onListening);
      reject(error);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

// The variable is named in the message: the worker's is WORKER_METRICS_PORT, not the API's.
function bindFailure(error: unknown, port: number, variable: string): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return `port ${port} is already in use (set ${variable} to a free port)`;
  if (code === 'EACCES') return `not allowed to listen on port ${port} (set ${variable} to another port)`;
  if (code === 'EADDRNOTAVAIL') return 'no such address on this host (check METRICS_HOST)';
  return `${(error as Error).message} (check METRICS_HOST and ${variable})`;
}

export function closeMetricsServer(server: Server | undefined): Promise<void> {
  if (!server) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export function portOf(server: Server): number {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}
