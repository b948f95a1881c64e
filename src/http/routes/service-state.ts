import { snapshotStates } from '../../db/snapshot/content.js';
import type { Db } from '../../db/sqlite/connection.js';
import { lastFailedRun, lastAttempt, lastSuccessfulCmsRun } from '../../db/snapshot/sync-runs.js';
import type { SyncRunRow } from '../../db/snapshot/schema.js';
import { parseIsoToMs } from '../../lib/time.js';
import type { Health } from '../contract/response-schemas.js';

/*
 * What /health and the metrics say about the snapshot and the sync: computed in one place so
 * that the two never disagree about whether the service is degraded.
 */

type SnapshotHealth = NonNullable<Health['snapshot']>;

const ageSeconds = (iso: string, now: number) => Math.max(0, Math.round((now - (parseIsoToMs(iso) ?? now)) / 1000));

// /health needs no key: a failed run's reason is shown without addresses, paths or host
// names (the whole text is in `npm run sync -- --status`), and kept short.
const REASON_LENGTH = 200;
// What is read of a stored reason (at most 2,000 characters in sync_runs): enough for the 200 shown.
const REASON_INPUT_LENGTH = 1_000;

export function publicReason(error: string): string {
  // Part of this text comes from the CMS (its status text, its error message) and /health
  // needs no key: every pattern here matches maximal runs, so it costs linear time whatever
  // the text (a letter required in the middle of a pattern backtracked badly on "a-a-a-...").
  return statusCodeOnly(error.slice(0, REASON_INPUT_LENGTH))
    .replace(/[a-z][a-z0-9+.-]*(?::\/\/\S*)?/gi, (run) => (run.includes('://') ? '<address>' : run))
    .replace(/(^|[\s(=:])\/[^\s),;]*/g, '$1<path>')
    .replace(/\b(?:\d{1,3}\.){3}\d{1,3}\b/g, '<host>')
    .replace(/[\w.-]+/g, hideHostName)
    .slice(0, REASON_LENGTH);
}

/**
 * What follows an HTTP status in a reason is the other side's own text (the CMS's status line
 * and error message, which may name its internals): --status shows it to the operator, /health
 * keeps the status code and the attempts.
 */
function statusCodeOnly(text: string): string {
  const status = /HTTP \d{3}/.exec(text);
  if (!status) return text;
  const end = status.index + status[0].length;
  const attempts = / \(\d+ attempts\)$/.exec(text);
  return text.slice(0, end) + (attempts && attempts.index >= end ? attempts[0] : '');
}

/** A run of name characters with a dotted name inside (its first label has a letter) hidden. */
function hideHostName(run: string): string {
  let start = 0;
  let end = run.length;
  while (start < end && run[start] === '.') start += 1;
  while (end > start && run[end - 1] === '.') end -= 1;
  const labels = run.slice(start, end).split('.');
  const isHost = labels.length > 1 && labels.every((l) => l.length > 0) && /[a-z]/i.test(labels[0]!);
  return isHost ? `${run.slice(0, start)}<host>${run.slice(end)}` : run;
}

/** The snapshot's state, or undefined when it has never been synced. */
export function snapshotHealth(db: Db, now: number, maxAgeSeconds: number): SnapshotHealth | undefined {
  const states = snapshotStates(db);
  if (states.length === 0) return undefined;
  // The last time content came from the CMS: a --reindex does not make it fresher.
  const success = lastSuccessfulCmsRun(db);
  const attempt = lastAttempt(db);
  const failure = lastFailedRun(db);
  const locales = Object.fromEntries(
    states.map((s) => [s.locale, { synced_at: s.syncedAt, age_seconds: ageSeconds(s.syncedAt, now), changed_at: s.changedAt }]),
  );
  return {
    locales,
    age_seconds: Math.max(...Object.values(locales).map((l) => l.age_seconds)),
    max_age_seconds: maxAgeSeconds,
    last_sync:
      success?.finishedAt != null
        ? { kind: success.kind, finished_at: success.finishedAt, age_seconds: ageSeconds(success.finishedAt, now) }
        : null,
    last_attempt: attempt ? describeRun(attempt) : null,
    last_failure: failure ? describeRun(failure) : null,
  };
}

function describeRun(run: SyncRunRow) {
  return {
    kind: run.kind,
    status: run.status === 'succeeded' ? ('succeeded' as const) : ('failed' as const),
    started_at: run.startedAt,
    finished_at: run.finishedAt,
    error: run.error === null ? null : publicReason(run.error),
  };
}

/** Why the service is degraded, one sentence each; empty when it is not. */
export function problemsOf(snapshot: SnapshotHealth): string[] {
  const problems: string[] = [];
  if (snapshot.age_seconds > snapshot.max_age_seconds) {
    problems.push(`The snapshot is ${snapshot.age_seconds} s old, past SNAPSHOT_MAX_AGE (${snapshot.max_age_seconds} s).`);
  }
  if (snapshot.last_attempt?.status === 'failed') {
    problems.push(`The last sync (${snapshot.last_attempt.kind}) failed: ${snapshot.last_attempt.error ?? 'no reason recorded'}.`);
  }
  return problems;
}
