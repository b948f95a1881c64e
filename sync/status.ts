import type { SyncRunRow } from '../src/db/snapshot/schema.js';

/** `npm run sync -- --status`: the last runs, newest first, as a table for people. */
export function formatRuns(runs: SyncRunRow[]): string[] {
  if (runs.length === 0) return ['No sync has run yet. Start one with: npm run sync -- --once'];
  const rows = [
    ['ID', 'KIND', 'STATUS', 'STARTED', 'FINISHED', 'FETCHED', 'UPSERTED', 'REMOVED', 'REJECTED', 'ERROR'],
    ...runs.map((r) => [
      String(r.id), r.kind, r.status, r.startedAt, r.finishedAt ?? '-', String(r.fetched), String(r.upserted),
      String(r.removed), String(r.rejected), r.error ?? '',
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd());
}

export function runsAsJson(runs: SyncRunRow[]): unknown[] {
  return runs.map((r) => ({
    id: r.id,
    kind: r.kind,
    status: r.status,
    started_at: r.startedAt,
    finished_at: r.finishedAt,
    fetched: r.fetched,
    upserted: r.upserted,
    removed: r.removed,
    rejected: r.rejected,
    error: r.error,
  }));
}

/** worker_state key of the last CMS webhook received (see sync/webhook.ts). */
export const LAST_WEBHOOK = 'last_webhook';

export function formatLastWebhook(stored: string | undefined): string {
  if (stored === undefined) return 'Last webhook: none received (see WEBHOOK_PORT).';
  const { received_at, status, outcome } = JSON.parse(stored) as { received_at: string; status: number; outcome: string };
  return `Last webhook: ${received_at}, ${status} ${outcome}`;
}
