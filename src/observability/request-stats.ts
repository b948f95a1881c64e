import type { Registry } from 'prom-client';
import { METRIC_PREFIX as P } from './registry.js';

/*
 * Request counts and latency histograms kept as plain numbers and handed to prom-client only
 * when Prometheus scrapes. prom-client's label children re-hash their labels on every
 * observation (measured on a loaded machine: 5-6 µs per response for a counter and a
 * histogram, against 150 µs for a whole cached answer); here a response costs one Map lookup,
 * two additions and a walk over 12 bucket bounds (with the finish listener and the route
 * label, 1-3 µs in the same measurement).
 */

export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

interface Series {
  labels: { route: string; status: string };
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative), the last slot for those above every bound. */
  perBucket: Float64Array;
}

type Value = { labels: Record<string, string | number>; value: number; metricName?: string };

export class RequestStats {
  private readonly series = new Map<string, Series>();

  constructor(registry: Registry) {
    const requestsName = `${P}http_requests_total`;
    const durationName = `${P}http_request_duration_seconds`;
    // Metric objects in the shape prom-client's registries read (and cluster aggregation sums).
    registry.registerMetric(
      this.metric(requestsName, 'counter', 'Responses sent, by route and status.', () =>
        [...this.series.values()].map((s) => ({ labels: s.labels, value: s.count })),
      ),
    );
    registry.registerMetric(
      this.metric(
        durationName,
        'histogram',
        'Time from the request to the end of its response, by route and status.',
        () => [...this.series.values()].flatMap((s) => histogramValues(durationName, s)),
      ),
    );
  }

  record(route: string, status: number, seconds: number): void {
    const key = `${route} ${status}`;
    let s = this.series.get(key);
    if (!s) {
      s = { labels: { route, status: String(status) }, count: 0, sum: 0, perBucket: new Float64Array(DURATION_BUCKETS.length + 1) };
      this.series.set(key, s);
    }
    s.count += 1;
    s.sum += seconds;
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
    s.perBucket[i]! += 1;
  }

  private metric(name: string, type: 'counter' | 'histogram', help: string, values: () => Value[]) {
    const read = () => ({ name, help, type, aggregator: 'sum' as const, values: values() });
    // registerMetric's type wants a whole prom-client Metric; the registry only calls get().
    return { name, help, type, aggregator: 'sum', get: async () => read(), reset: () => this.series.clear() } as unknown as Parameters<
      Registry['registerMetric']
    >[0];
  }
}

function histogramValues(name: string, s: Series): Value[] {
  const values: Value[] = [];
  let cumulative = 0;
  DURATION_BUCKETS.forEach((bound, i) => {
    cumulative += s.perBucket[i]!;
    values.push({ metricName: `${name}_bucket`, labels: { ...s.labels, le: bound }, value: cumulative });
  });
  values.push({ metricName: `${name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count });
  values.push({ metricName: `${name}_sum`, labels: s.labels, value: s.sum });
  values.push({ metricName: `${name}_count`, labels: s.labels, value: s.count });
  return values;
}
