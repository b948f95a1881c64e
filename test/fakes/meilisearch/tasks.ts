/** The task object, its views, and the `/tasks` query parameters (filters shared by list, delete and cancel). */
import { badRequest } from './errors.js';
import type { MeiliErrorBody } from './errors.js';
import type { FilterNode } from './search/filter.js';
import type { SettingsPatch } from './settings.js';
import { compareInstants, isoDuration, isValidIndexUid, invalidIndexUidMessage, type Doc, type Instant } from './values.js';

export const TASK_STATUSES = ['enqueued', 'processing', 'succeeded', 'failed', 'canceled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const TASK_TYPES = [
  'documentAdditionOrUpdate', 'documentEdition', 'documentDeletion', 'settingsUpdate', 'indexCreation', 'indexDeletion',
  'indexUpdate', 'indexSwap', 'taskCancelation', 'taskDeletion', 'dumpCreation', 'snapshotCreation', 'export',
  'upgradeDatabase', 'indexCompaction',
] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export interface IndexSwapSpec {
  indexes: [string, string];
  /** true renames the first index to the second (which must not exist) instead of swapping. */
  rename: boolean;
}

/** What a task does when processed; kept out of the public view. */
export type TaskOp =
  | { kind: 'indexCreation'; primaryKey: string | null }
  | { kind: 'indexUpdate'; primaryKey?: string | null; newUid?: string }
  | { kind: 'indexDeletion' }
  | { kind: 'documentAdditionOrUpdate'; documents: Doc[]; primaryKey: string | null; merge: boolean; skipCreation: boolean }
  | { kind: 'documentDeletionByIds'; ids: string[] }
  | { kind: 'documentDeletionByFilter'; filter: FilterNode | null }
  | { kind: 'documentClear' }
  | { kind: 'settingsUpdate'; patch: SettingsPatch }
  | { kind: 'indexSwap'; swaps: IndexSwapSpec[] }
  | { kind: 'taskDeletion'; matched: number[] }
  | { kind: 'taskCancelation'; matched: number[] };

export interface TaskRecord {
  uid: number;
  batchUid: number | null;
  indexUid: string | null;
  status: TaskStatus;
  type: TaskType;
  canceledBy: number | null;
  details: Record<string, unknown>;
  error: MeiliErrorBody | null;
  enqueuedAt: Instant;
  startedAt: Instant | null;
  finishedAt: Instant | null;
  customMetadata?: string;
  op: TaskOp;
}

/** The public task object (`GET /tasks/{uid}`), in the engine's key order. */
export function taskView(task: TaskRecord): Record<string, unknown> {
  const view: Record<string, unknown> = {
    uid: task.uid,
    batchUid: task.batchUid,
    indexUid: task.indexUid,
    status: task.status,
    type: task.type,
    canceledBy: task.canceledBy,
    details: structuredClone(task.details),
    error: task.error ? { ...task.error } : null,
    duration: task.startedAt && task.finishedAt ? isoDuration(task.startedAt, task.finishedAt) : null,
    enqueuedAt: task.enqueuedAt.text,
    startedAt: task.startedAt?.text ?? null,
    finishedAt: task.finishedAt?.text ?? null,
  };
  if (task.customMetadata !== undefined) view['customMetadata'] = task.customMetadata;
  return view;
}

/** The summarized task a write answers with (202, or 200 for task deletion/cancelation). */
export function summarizedView(task: TaskRecord): Record<string, unknown> {
  return { taskUid: task.uid, indexUid: task.indexUid, status: task.status, type: task.type, enqueuedAt: task.enqueuedAt.text };
}

interface DateBound {
  at: Instant;
  before: boolean;
}

export interface TaskFilter {
  uids?: number[];
  batchUids?: number[];
  canceledBy?: number[];
  types?: string[];
  statuses?: string[];
  indexUids?: string[];
  enqueuedAt: DateBound[];
  startedAt: DateBound[];
  finishedAt: DateBound[];
}

const FILTER_PARAMS = [
  'uids', 'batchUids', 'canceledBy', 'types', 'statuses', 'indexUids', 'afterEnqueuedAt', 'beforeEnqueuedAt',
  'afterStartedAt', 'beforeStartedAt', 'afterFinishedAt', 'beforeFinishedAt',
];
const LIST_PARAMS = ['limit', 'from', 'reverse', ...FILTER_PARAMS];

const snake = (s: string): string => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function parseDate(param: string, raw: string): Instant {
  const rfc = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.exec(raw);
  const after = param.startsWith('after');
  const invalid = (): never => {
    throw badRequest(
      `invalid_task_${snake(param)}`,
      `Invalid value in parameter \`${param}\`: \`${raw}\` is an invalid date-time. It should follow the YYYY-MM-DD or RFC 3339 date-time format.`,
    );
  };
  if (rfc) {
    const ms = Date.parse(`${rfc[1]}T${rfc[2]}${(rfc[3] ?? '').slice(0, 4)}${rfc[4]?.toUpperCase()}`);
    if (Number.isNaN(ms)) return invalid();
    const digits = (rfc[3] ?? '.').slice(1).padEnd(9, '0');
    return { ms, ns: Number(digits.slice(3, 9)), text: raw };
  }
  if (/^\d{4}-\d{2}-\d{2}$/.test(raw)) {
    const ms = Date.parse(`${raw}T00:00:00Z`);
    if (Number.isNaN(ms)) return invalid();
    // A bare date means its whole day: `after` starts at the next midnight, as the engine does.
    return { ms: after ? ms + 86_400_000 : ms, ns: 0, text: raw };
  }
  return invalid();
}

function uintList(param: string, raw: string, code: string): number[] {
  return raw.split(',').map((part) => {
    if (!/^\d+$/.test(part.trim())) {
      throw badRequest(code, `Invalid value in parameter \`${param}\`: could not parse \`${part}\` as a positive integer`);
    }
    return Number(part.trim());
  });
}

export interface TaskQuery {
  filter: TaskFilter;
  limit: number;
  from: number | null;
  reverse: boolean;
  /** Whether any filter parameter was given (delete and cancel refuse an empty filter). */
  hasFilter: boolean;
}

/** Parses `/tasks` query parameters; `forDeletion` rejects the paging parameters as the engine does. */
export function parseTaskQuery(params: URLSearchParams, forDeletion: boolean): TaskQuery {
  const allowed = forDeletion ? FILTER_PARAMS : LIST_PARAMS;
  const filter: TaskFilter = { enqueuedAt: [], startedAt: [], finishedAt: [] };
  let limit = 20;
  let from: number | null = null;
  let reverse = false;
  let hasFilter = false;
  for (const [param, raw] of params) {
    if (!allowed.includes(param)) {
      throw badRequest('bad_request', `Unknown parameter \`${param}\`: expected one of ${allowed.map((p) => `\`${p}\``).join(', ')}`);
    }
    if (FILTER_PARAMS.includes(param)) hasFilter = true;
    const values = raw.split(',').map((v) => v.trim());
    const star = values.includes('*');
    switch (param) {
      case 'limit':
      case 'from': {
        if (!/^\d+$/.test(raw)) throw badRequest(`invalid_task_${param}`, `Invalid value in parameter \`${param}\`: could not parse \`${raw}\` as a positive integer`);
        if (param === 'limit') limit = Number(raw);
        else from = Number(raw);
        break;
      }
      case 'reverse':
        if (raw !== 'true' && raw !== 'false') throw badRequest('invalid_task_reverse', `Invalid value in parameter \`reverse\`: could not parse \`${raw}\` as a boolean, expected either \`true\` or \`false\``);
        reverse = raw === 'true';
        break;
      case 'uids':
        if (!star) filter.uids = uintList(param, raw, 'invalid_task_uids');
        break;
      case 'batchUids':
        if (!star) filter.batchUids = uintList(param, raw, 'invalid_batch_uids');
        break;
      case 'canceledBy':
        if (!star) filter.canceledBy = uintList(param, raw, 'invalid_task_canceled_by');
        break;
      case 'statuses':
        for (const v of values) {
          if (v !== '*' && !(TASK_STATUSES as readonly string[]).includes(v)) {
            throw badRequest(
              'invalid_task_statuses',
              `Invalid value in parameter \`statuses\`: \`${v}\` is not a valid task status. Available statuses are ${TASK_STATUSES.map((s) => `\`${s}\``).join(', ')}.`,
            );
          }
        }
        if (!star) filter.statuses = values;
        break;
      case 'types':
        for (const v of values) {
          if (v !== '*' && !(TASK_TYPES as readonly string[]).includes(v)) {
            throw badRequest(
              'invalid_task_types',
              `Invalid value in parameter \`types\`: \`${v}\` is not a valid task type. Available types are ${TASK_TYPES.map((s) => `\`${s}\``).join(', ')}.`,
            );
          }
        }
        if (!star) filter.types = values;
        break;
      case 'indexUids':
        for (const v of values) {
          if (v !== '*' && !isValidIndexUid(v)) throw badRequest('invalid_index_uid', `Invalid value in parameter \`indexUids\`: ${invalidIndexUidMessage(v)}`);
        }
        if (!star) filter.indexUids = values;
        break;
      default: {
        if (raw === '*') break;
        const before = param.startsWith('before');
        const field = param.replace(/^(before|after)/, '');
        const key = (field.charAt(0).toLowerCase() + field.slice(1)) as 'enqueuedAt' | 'startedAt' | 'finishedAt';
        filter[key].push({ at: parseDate(param, raw), before });
      }
    }
  }
  return { filter, limit, from, reverse, hasFilter };
}

export function matchesTaskFilter(task: TaskRecord, f: TaskFilter): boolean {
  if (f.uids && !f.uids.includes(task.uid)) return false;
  if (f.batchUids && (task.batchUid === null || !f.batchUids.includes(task.batchUid))) return false;
  if (f.canceledBy && (task.canceledBy === null || !f.canceledBy.includes(task.canceledBy))) return false;
  if (f.types && !f.types.includes(task.type)) return false;
  if (f.statuses && !f.statuses.includes(task.status)) return false;
  // A swap task concerns both of its indexes even though its indexUid is null.
  if (f.indexUids) {
    const uids = task.op.kind === 'indexSwap' ? task.op.swaps.flatMap((s) => s.indexes) : task.indexUid === null ? [] : [task.indexUid];
    if (!uids.some((u) => f.indexUids?.includes(u))) return false;
  }
  const inBounds = (at: Instant | null, bounds: DateBound[]): boolean =>
    bounds.every((b) => at !== null && (b.before ? compareInstants(at, b.at) < 0 : compareInstants(at, b.at) > 0));
  return inBounds(task.enqueuedAt, f.enqueuedAt) && inBounds(task.startedAt, f.startedAt) && inBounds(task.finishedAt, f.finishedAt);
}
