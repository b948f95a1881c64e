/**
 * The task queue and what each task does. Writes are registered as tasks and applied later, one
 * at a time, so a client sees enqueued -> processing -> succeeded|failed as with the real engine,
 * and failures land in the task, never in the HTTP answer that enqueued it.
 */
import { errorBody, MeiliError, type MeiliErrorBody } from './errors.js';
import { checkFilterable, evaluate } from './search/filter.js';
import { applySettingsPatch } from './settings.js';
import { indexView, newIndex, recordFields, touch, type IndexState } from './state.js';
import { matchesTaskFilter, summarizedView, taskView, type TaskFilter, type TaskOp, type TaskRecord, type TaskType } from './tasks.js';
import { CURRENT_MODE, type TokenizerMode } from './search/tokenize.js';
import { now, valuesAtPath, type Doc } from './values.js';

export interface EnqueueRequest {
  type: TaskType;
  indexUid: string | null;
  op: TaskOp;
  details: Record<string, unknown>;
  customMetadata?: string;
}

const docError = (indexUid: string, code: string, message: string): MeiliError => new MeiliError(400, code, `Index \`${indexUid}\`: ${message}`);

/** Document ids: integers, or strings of [a-zA-Z0-9_-] (surrounding spaces trimmed), at most 511 bytes. */
function documentId(value: unknown): string | null {
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : null;
  if (typeof value !== 'string') return null;
  const id = value.trim();
  return id !== '' && /^[a-zA-Z0-9_-]+$/.test(id) && Buffer.byteLength(id) <= 511 ? id : null;
}

/** Primary key inference from the first document: the single field whose name ends with `id`. */
function inferPrimaryKey(indexUid: string, first: Doc): string {
  const candidates = Object.keys(first).filter((k) => k.toLowerCase().endsWith('id'));
  if (candidates.length === 1) return candidates[0] as string;
  if (candidates.length === 0) {
    throw docError(
      indexUid,
      'index_primary_key_no_candidate_found',
      'The primary key inference failed as the engine did not find any field ending with `id` in its name. Please specify the primary key manually using the `primaryKey` query parameter.',
    );
  }
  throw docError(
    indexUid,
    'index_primary_key_multiple_candidates_found',
    `The primary key inference failed as the engine found ${candidates.length} fields ending with \`id\` in their names: ${candidates
      .map((c) => `'${c}'`)
      .join(' and ')}. Please specify the primary key manually using the \`primaryKey\` query parameter.`,
  );
}

/** Tasks with the same key (and index) may share a batch; null for tasks that batch alone. */
function batchKey(task: TaskRecord): string | null {
  const op = task.op;
  if (op.kind === 'documentAdditionOrUpdate') return `add|${op.merge}|${op.primaryKey ?? ''}|${op.skipCreation}`;
  if (op.kind === 'documentDeletionByIds') return 'delete-ids';
  return null;
}

export class Engine {
  readonly indexes = new Map<string, IndexState>();
  /** How the version the fake pretends to be tokenizes: new indexes and queries follow it. */
  tokenizer: TokenizerMode = CURRENT_MODE;
  /** Searches answer `degraded: true`, unranked (the search cutoff struck). */
  degraded = false;
  private readonly taskList = new Map<number, TaskRecord>();
  private nextBatchUid = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private pendingFailure: MeiliErrorBody | null = null;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly taskDelayMs: number) {}

  /** Registers a task and answers its summarized view. */
  enqueue(req: EnqueueRequest): Record<string, unknown> {
    let last = -1;
    for (const uid of this.taskList.keys()) last = Math.max(last, uid);
    const task: TaskRecord = {
      uid: last + 1, // the engine also continues from the highest stored uid
      batchUid: null,
      indexUid: req.indexUid,
      status: 'enqueued',
      type: req.type,
      canceledBy: null,
      details: req.details,
      error: null,
      enqueuedAt: now(),
      startedAt: null,
      finishedAt: null,
      op: req.op,
    };
    if (req.customMetadata !== undefined) task.customMetadata = req.customMetadata;
    this.taskList.set(task.uid, task);
    this.kick();
    return summarizedView(task);
  }

  task(uid: number): TaskRecord | undefined {
    return this.taskList.get(uid);
  }

  /** Tasks matching a filter, newest first. */
  filterTasks(filter: TaskFilter): TaskRecord[] {
    return [...this.taskList.values()].filter((t) => matchesTaskFilter(t, filter)).sort((a, b) => b.uid - a.uid);
  }

  allTaskViews(): Record<string, unknown>[] {
    return [...this.taskList.values()].sort((a, b) => a.uid - b.uid).map(taskView);
  }

  failNextTask(error: MeiliErrorBody): void {
    this.pendingFailure = error;
  }

  hasPendingWork(): boolean {
    for (const t of this.taskList.values()) if (t.status === 'enqueued' || t.status === 'processing') return true;
    return false;
  }

  /** Resolves once no task is enqueued or processing. */
  idle(): Promise<void> {
    if (!this.hasPendingWork() || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private kick(): void {
    if (this.closed || this.timer !== undefined) return;
    if (![...this.taskList.values()].some((t) => t.status === 'enqueued')) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
      return;
    }
    this.timer = setTimeout(() => this.start(), this.taskDelayMs);
  }

  /**
   * Picks the next batch like the engine's scheduler: cancelations, then task deletions, then
   * everything else in uid order. Consecutive document tasks of one index are autobatched as
   * the engine does (index-scheduler `autobatcher.rs`): additions with the same method and
   * primary key, or deletions by id, go together into one batch, share its batchUid and times,
   * and all fail together when one of them fails (one bad document fails every task of its
   * batch). Marks the batch processing and finishes it after `taskDelayMs`.
   */
  private start(): void {
    const enqueued = [...this.taskList.values()].filter((t) => t.status === 'enqueued').sort((a, b) => a.uid - b.uid);
    const first =
      enqueued.find((t) => t.type === 'taskCancelation') ?? enqueued.find((t) => t.type === 'taskDeletion') ?? enqueued[0];
    if (!first) {
      this.timer = undefined;
      this.kick();
      return;
    }
    const batch = [first];
    const key = batchKey(first);
    if (key !== null) {
      for (const t of enqueued) {
        if (t.uid <= first.uid || t.indexUid !== first.indexUid) continue;
        if (batchKey(t) !== key) break;
        batch.push(t);
      }
    }
    const batchUid = this.nextBatchUid++;
    const startedAt = now();
    for (const task of batch) {
      task.status = 'processing';
      task.batchUid = batchUid;
      task.startedAt = startedAt;
    }
    // Processing lasts as long as the wait did, so tests with a long delay can observe it.
    this.timer = setTimeout(() => this.finish(batch), Math.max(1, this.taskDelayMs));
  }

  private finish(batch: TaskRecord[]): void {
    this.timer = undefined;
    const failure = this.pendingFailure;
    this.pendingFailure = null;
    const snapshot = batch.length > 1 ? this.snapshotIndex(batch[0]!.indexUid) : undefined;
    let error: MeiliErrorBody | null = null;
    try {
      if (failure) throw Object.assign(new MeiliError(500, failure.code, failure.message), { injected: failure });
      for (const task of batch) this.execute(task);
    } catch (err) {
      const injected = (err as { injected?: MeiliErrorBody }).injected;
      error = injected ?? (err instanceof MeiliError ? err.body() : errorBody('internal', String(err)));
      // A failed batch changes nothing: the engine commits a batch in one write transaction.
      if (snapshot !== undefined) this.restoreIndex(batch[0]!.indexUid, snapshot);
    }
    const finishedAt = now();
    for (const task of batch) {
      task.status = error ? 'failed' : 'succeeded';
      if (error) {
        task.error = { ...error };
        // Counters a failed task reports as zero.
        for (const k of ['indexedDocuments', 'deletedDocuments', 'deletedTasks', 'canceledTasks']) {
          if (k in task.details) task.details[k] = 0;
        }
      }
      task.finishedAt = finishedAt;
    }
    this.kick();
  }

  private snapshotIndex(uid: string | null): IndexState | null {
    const index = uid === null ? undefined : this.indexes.get(uid);
    return index ? { ...index, documents: new Map(index.documents), fieldOrder: [...index.fieldOrder] } : null;
  }

  private restoreIndex(uid: string | null, saved: IndexState | null): void {
    if (uid === null) return;
    if (saved === null) this.indexes.delete(uid);
    else this.indexes.set(uid, saved);
  }

  private requireIndex(uid: string | null): IndexState {
    const index = uid === null ? undefined : this.indexes.get(uid);
    if (!index) throw new MeiliError(404, 'index_not_found', `Index \`${String(uid)}\` not found.`);
    return index;
  }

  private execute(task: TaskRecord): void {
    const op = task.op;
    const uid = task.indexUid as string;
    switch (op.kind) {
      case 'indexCreation': {
        if (this.indexes.has(uid)) throw new MeiliError(409, 'index_already_exists', `Index \`${uid}\` already exists.`);
        this.indexes.set(uid, newIndex(uid, op.primaryKey, this.tokenizer));
        return;
      }
      case 'indexUpdate': {
        const index = this.requireIndex(uid);
        if (op.primaryKey !== undefined && op.primaryKey !== index.primaryKey) {
          if (index.documents.size > 0 && index.primaryKey !== null) {
            throw docError(uid, 'index_primary_key_already_exists', `Index already has a primary key: \`${index.primaryKey}\`.`);
          }
          index.primaryKey = op.primaryKey;
        }
        if (op.newUid !== undefined && op.newUid !== uid) {
          if (this.indexes.has(op.newUid)) throw new MeiliError(409, 'index_already_exists', `Index \`${op.newUid}\` already exists.`);
          this.indexes.delete(uid);
          index.uid = op.newUid;
          this.indexes.set(op.newUid, index);
        }
        touch(index);
        return;
      }
      case 'indexDeletion': {
        const index = this.requireIndex(uid);
        task.details['deletedDocuments'] = index.documents.size;
        this.indexes.delete(uid);
        return;
      }
      case 'documentAdditionOrUpdate':
        return this.addDocuments(task, op);
      case 'documentDeletionByIds': {
        const index = this.requireIndex(uid);
        let deleted = 0;
        for (const id of new Set(op.ids)) if (index.documents.delete(id)) deleted++;
        task.details['deletedDocuments'] = deleted;
        touch(index);
        return;
      }
      case 'documentDeletionByFilter': {
        const index = this.requireIndex(uid);
        let deleted = 0;
        if (op.filter) {
          checkFilterable(op.filter, index.settings, uid, 'invalid_document_filter');
          for (const [id, doc] of index.documents) {
            if (evaluate(op.filter, doc)) {
              index.documents.delete(id);
              deleted++;
            }
          }
        }
        task.details['deletedDocuments'] = deleted;
        touch(index);
        return;
      }
      case 'documentClear': {
        const index = this.requireIndex(uid);
        task.details['deletedDocuments'] = index.documents.size;
        index.documents.clear();
        touch(index);
        return;
      }
      case 'settingsUpdate': {
        // Like the engine, a settings update on a missing index creates it.
        const existing = this.indexes.get(uid);
        const index = existing ?? newIndex(uid, null, this.tokenizer);
        const settings = applySettingsPatch(index.settings, op.patch);
        index.settings = settings;
        if (!existing) this.indexes.set(uid, index);
        touch(index);
        return;
      }
      case 'indexSwap':
        return this.swap(task, op.swaps);
      case 'taskDeletion': {
        let deleted = 0;
        for (const id of op.matched) {
          const t = this.taskList.get(id);
          // Enqueued and processing tasks are never deleted, whatever the filter says.
          if (!t || t.status === 'enqueued' || t.status === 'processing') continue;
          this.taskList.delete(id);
          deleted++;
        }
        task.details['deletedTasks'] = deleted;
        return;
      }
      case 'taskCancelation': {
        let canceled = 0;
        for (const id of op.matched) {
          const t = this.taskList.get(id);
          if (!t || t.status !== 'enqueued') continue;
          t.status = 'canceled';
          t.canceledBy = task.uid;
          t.finishedAt = now();
          canceled++;
        }
        task.details['canceledTasks'] = canceled;
        return;
      }
    }
  }

  private addDocuments(task: TaskRecord, op: Extract<TaskOp, { kind: 'documentAdditionOrUpdate' }>): void {
    const uid = task.indexUid as string;
    const existing = this.indexes.get(uid);
    let primaryKey = existing?.primaryKey ?? null;
    if (op.primaryKey !== null) {
      if (primaryKey !== null && primaryKey !== op.primaryKey) {
        throw docError(uid, 'index_primary_key_already_exists', `Index already has a primary key: \`${primaryKey}\`.`);
      }
      primaryKey = op.primaryKey;
    }
    const first = op.documents[0];
    if (primaryKey === null && first) primaryKey = inferPrimaryKey(uid, first);
    // Validate the whole batch first: one bad document fails the task and changes nothing.
    const prepared: [string, Doc][] = op.documents.map((doc) => {
      const values = valuesAtPath(doc, primaryKey as string);
      if (values.length === 0 || values[0] === null) {
        throw docError(uid, 'missing_document_id', `Document doesn't have a \`${String(primaryKey)}\` attribute: \`${JSON.stringify(doc)}\`.`);
      }
      const id = values.length === 1 ? documentId(values[0]) : null;
      if (id === null) {
        throw docError(
          uid,
          'invalid_document_id',
          `Document identifier \`${JSON.stringify(values.length === 1 ? values[0] : values)}\` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.`,
        );
      }
      return [id, doc];
    });
    const index = existing ?? newIndex(uid, primaryKey, this.tokenizer);
    index.primaryKey = primaryKey;
    for (const [id, doc] of prepared) {
      const previous = index.documents.get(id);
      if (op.merge) {
        if (!previous && op.skipCreation) continue;
        index.documents.set(id, { ...(previous ?? {}), ...structuredClone(doc) });
      } else {
        index.documents.set(id, structuredClone(doc));
      }
      recordFields(index, doc);
    }
    if (!existing) this.indexes.set(uid, index);
    task.details['indexedDocuments'] = prepared.length;
    touch(index);
  }

  /**
   * Swaps (or renames) indexes atomically: names then point at each other's documents and
   * settings, and earlier tasks mentioning one name now mention the other, as in the engine.
   */
  private swap(task: TaskRecord, swaps: Extract<TaskOp, { kind: 'indexSwap' }>['swaps']): void {
    const missing: string[] = [];
    for (const { indexes: [a, b], rename } of swaps) {
      if (!this.indexes.has(a) && !missing.includes(a)) missing.push(a);
      if (!rename && !this.indexes.has(b) && !missing.includes(b)) missing.push(b);
    }
    if (missing.length > 0) {
      throw new MeiliError(404, 'index_not_found', `Indexes ${missing.map((m) => `\`${m}\``).join(', ')} not found.`);
    }
    for (const { indexes: [, b], rename } of swaps) {
      if (rename && this.indexes.has(b)) throw new MeiliError(409, 'index_already_exists', `Index \`${b}\` already exists.`);
    }
    for (const { indexes: [a, b], rename } of swaps) {
      const left = this.indexes.get(a) as IndexState;
      const right = this.indexes.get(b);
      this.indexes.delete(a);
      this.indexes.delete(b);
      left.uid = b;
      this.indexes.set(b, left);
      if (!rename && right) {
        right.uid = a;
        this.indexes.set(a, right);
      }
      for (const t of this.taskList.values()) {
        if (t.uid >= task.uid) continue;
        if (t.indexUid === a) t.indexUid = b;
        else if (t.indexUid === b && !rename) t.indexUid = a;
      }
    }
  }

  indexViews(): Record<string, unknown>[] {
    return [...this.indexes.values()].sort((x, y) => (x.uid < y.uid ? -1 : 1)).map(indexView);
  }
}
