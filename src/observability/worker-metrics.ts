import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { METRIC_PREFIX as P } from './registry.js';

/** What the worker reports of one run (sync/run-sync.ts's summary fits). */
export interface RunOutcome {
  kind: string;
  status: 'succeeded' | 'failed';
  durationMs: number;
  upserted: number;
  removed: number;
  rejected: number;
}

/**
 * The long-running worker's metrics: runs by kind and result, their duration, the articles
 * they changed and when each kind last succeeded. A one-shot run (`sync --once` from cron)
 * exits before any scrape: it is seen through sync_runs, which the API's metrics read.
 */
export class WorkerMetrics {
  private readonly runs: Counter;
  private readonly duration: Histogram;
  private readonly changed: Counter;
  private readonly rejected: Counter;
  private readonly lastSuccess: Gauge;

  constructor(registry: Registry) {
    this.runs = new Counter({
      name: `${P}sync_runs_total`,
      help: 'Sync runs, by kind (full, incremental, reindex) and result (succeeded, failed).',
      labelNames: ['kind', 'result'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: `${P}sync_duration_seconds`,
      help: 'Duration of sync runs, by kind and result.',
      labelNames: ['kind', 'result'],
      buckets: [0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800],
      registers: [registry],
    });
    this.changed = new Counter({
      name: `${P}sync_articles_changed_total`,
      help: 'Articles written or removed by successful runs, by kind and change (upserted, removed).',
      labelNames: ['kind', 'change'],
      registers: [registry],
    });
    this.rejected = new Counter({
      name: `${P}sync_records_rejected_total`,
      help: 'CMS records skipped because they failed validation.',
      labelNames: ['kind'],
      registers: [registry],
    });
    this.lastSuccess = new Gauge({
      name: `${P}sync_last_success_timestamp_seconds`,
      help: 'When a run of this kind last succeeded (Unix time).',
      labelNames: ['kind'],
      registers: [registry],
    });
  }

  record(run: RunOutcome, endedAtMs: number): void {
    const labels = { kind: run.kind, result: run.status };
    this.runs.inc(labels);
    this.duration.observe(labels, run.durationMs / 1000);
    if (run.status !== 'succeeded') return;
    this.changed.inc({ kind: run.kind, change: 'upserted' }, run.upserted);
    this.changed.inc({ kind: run.kind, change: 'removed' }, run.removed);
    this.rejected.inc({ kind: run.kind }, run.rejected);
    this.lastSuccess.set({ kind: run.kind }, endedAtMs / 1000);
  }
}
