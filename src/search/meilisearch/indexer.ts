/*
 * One piece on purpose (over 300 lines): MeilisearchIndexer is one state machine per run (check
 * the server's version, choose per locale between an update and a rebuild into a fresh index,
 * upload, await and check every task, swap, record what was indexed with which server), and its
 * steps share the run's client, version and unsynced marks. Its parts that stand alone already
 * live beside it: documents (documents.ts), upload batches (batches.ts), task waits (client.ts),
 * the live index's state (live-index.ts), the unsynced marks (unsynced.ts), the version check
 * (version.ts).
 */
import type { DeleteOrCancelTasksQuery, Meilisearch } from 'meilisearch';
import type { Db } from '../../db/sqlite/connection.js';
import { searchDocumentsAfter, searchDocumentsByIds, type SearchDocumentRow } from '../../db/snapshot/search-documents.js';
import { LOCALES, type Locale } from '../../locale.js';
import type { Logger } from '../../logger.js';
import { getWorkerState, setWorkerState } from '../../db/snapshot/sync-runs.js';
import { formatUtcSeconds } from '../../lib/time.js';
import type { LocaleChanges, SearchIndexer } from '../indexer.js';
import { documentBatches, type DocumentBatch } from './batches.js';
import {
  createMeiliClient,
  describeMeiliError,
  indexUid,
  isOwnMeiliError,
  waitAllSucceeded,
  waitSucceeded,
  type MeiliConnection,
  type PendingTask,
} from './client.js';
import { DOCUMENT_FORMAT, toMeiliDocument, type MeiliDocument } from './documents.js';
import { liveIndexState, type LiveIndexState } from './live-index.js';
import type { MeiliIndexConfig } from './settings.js';
import { markUnsynced, restoreUnsynced, type Unsynced } from './unsynced.js';
import { fetchServerVersion, type ServerVersion } from './version.js';

export { toMeiliDocument, type MeiliDocument } from './documents.js';

const MB = 1_000_000;
// Rows read from the snapshot at a time while building uploads: memory holds one upload and
// this many rows, whatever the batch size.
const READ_ROWS = 100;

/**
 * Keeps Meilisearch in step with the snapshot, after each commit. The server's version is
 * checked first on every run (GET /version), and only payloads it accepts are sent. Every task
 * is awaited and checked (a failed task does not throw in the client), with waits scaled to the
 * megabytes of documents behind them; uploads are capped in count and bytes. A full rebuild
 * fills a fresh index beside the live one and swaps them atomically, so searches never see a
 * half-built index; an update that finds the live index missing or without its settings
 * rebuilds that locale instead of writing into it.
 */
export class MeilisearchIndexer implements SearchIndexer {
  readonly name = 'meilisearch';
  private readonly client: Meilisearch;
  private version: ServerVersion | undefined;

  constructor(
    /** The worker's connection: its timeoutMs is MEILI_WORKER_TIMEOUT_MS, per request without documents. */
    private readonly connection: MeiliConnection,
    private readonly indexPrefix: string,
    private readonly config: MeiliIndexConfig,
    private readonly logger: Logger,
  ) {
    this.client = createMeiliClient(connection);
  }

  /** An incremental sync: each locale's changes; a locale that must be rebuilt is rebuilt. */
  async update(db: Db, changes: Map<Locale, LocaleChanges>, signal?: AbortSignal): Promise<void> {
    await this.bringAlong(db, changes, 'changes', signal);
  }

  /**
   * A full sync: every locale's index made equal to the snapshot by sending only the difference
   * (documents whose digest differs or that are missing, deletions of what the snapshot no
   * longer holds). A locale is rebuilt only when it must: its index is missing or has other
   * settings, or was indexed by another engine version or document format.
   */
  async reconcile(db: Db, changes: Map<Locale, LocaleChanges>, signal?: AbortSignal): Promise<{ sent: number; deleted: number; rebuilt: Locale[] }> {
    return this.bringAlong(db, changes, 'difference', signal);
  }

  async rebuild(db: Db, signal?: AbortSignal, changes?: Map<Locale, LocaleChanges>): Promise<{ documents: number }> {
    return this.guard(async () => {
      const version = await this.checkVersion();
      const since = new Date();
      const states = await this.liveStates();
      // The sync's changes go to the live indexes first, all locales before any rebuild: edited
      // articles stay searchable and no locale lags while another one rebuilds.
      if (changes) await this.applyToLive(db, changes, states, signal);
      let documents = 0;
      for (const locale of LOCALES) {
        signal?.throwIfAborted();
        documents += await this.rebuildLocale(db, locale, version, signal);
      }
      await this.cleanTasks(since);
      return { documents };
    });
  }

  private async bringAlong(
    db: Db,
    changes: Map<Locale, LocaleChanges>,
    how: 'changes' | 'difference',
    signal?: AbortSignal,
  ): Promise<{ sent: number; deleted: number; rebuilt: Locale[] }> {
    return this.guard(async () => {
      const version = await this.checkVersion();
      const since = new Date();
      const states = await this.liveStates();
      const stamp = indexedWithStamp(version);
      const rebuild = LOCALES.filter((locale) => {
        const state = states.get(locale);
        const indexedWith = getWorkerState(db, indexedWithKey(locale));
        if (state === 'ok' && indexedWith === stamp) return false;
        const live = indexUid(this.indexPrefix, locale);
        const why =
          state === 'missing'
            ? 'does not exist'
            : state !== 'ok'
              ? 'does not have the settings of meilisearch.config.json'
              : `was indexed with ${indexedWith ?? 'an unrecorded engine version'}, not ${stamp}: re-tokenizing`;
        this.logger.warn({ index: live, state, indexedWith: indexedWith ?? null, stamp }, `search index ${live} ${why}: rebuilding it from the snapshot`);
        return true;
      });
      let sent = 0;
      let deleted = 0;
      if (how === 'changes') {
        // Into every live index first (one that is rebuilt too keeps serving meanwhile).
        ({ sent, deleted } = await this.applyToLive(db, changes, states, signal));
      } else {
        for (const locale of LOCALES) {
          signal?.throwIfAborted();
          if (rebuild.includes(locale)) {
            if (states.get(locale) !== 'missing') {
              const applied = await this.applyToLive(db, new Map([[locale, changes.get(locale) ?? EMPTY]]), states, signal);
              sent += applied.sent;
              deleted += applied.deleted;
            }
            continue;
          }
          const difference = await this.reconcileLocale(db, locale, signal);
          sent += difference.sent;
          deleted += difference.deleted;
        }
      }
      for (const locale of rebuild) {
        signal?.throwIfAborted();
        await this.rebuildLocale(db, locale, version, signal);
      }
      await this.cleanTasks(since);
      return { sent, deleted, rebuilt: rebuild };
    });
  }

  private async liveStates(): Promise<Map<Locale, LiveIndexState>> {
    const states = new Map<Locale, LiveIndexState>();
    for (const locale of LOCALES) {
      states.set(locale, await liveIndexState(this.client, indexUid(this.indexPrefix, locale), this.config.settings(locale)));
    }
    return states;
  }

  /**
   * Every locale's removed ids are marked for the API first, then each live index that exists
   * gets its changes. Only removals are hidden meanwhile: an edited article keeps being found
   * (by its previous text until its new one is indexed; the API shows the snapshot's row).
   */
  private async applyToLive(
    db: Db,
    changes: Map<Locale, LocaleChanges>,
    states: Map<Locale, LiveIndexState>,
    signal?: AbortSignal,
  ): Promise<{ sent: number; deleted: number }> {
    const befores = new Map<Locale, Unsynced>();
    for (const [locale, change] of changes) {
      if (states.get(locale) !== 'missing') befores.set(locale, markUnsynced(db, locale, change.removedIds, now()));
    }
    let sent = 0;
    let deleted = 0;
    for (const [locale, before] of befores) {
      signal?.throwIfAborted();
      const change = changes.get(locale) as LocaleChanges;
      sent += await this.send(indexUid(this.indexPrefix, locale), rowsByIds(db, change.upsertedIds), change.removedIds, signal);
      deleted += change.removedIds.length;
      restoreUnsynced(db, locale, before, now());
    }
    return { sent, deleted };
  }

  /** The exact difference between a live index and the snapshot, by document digest. */
  private async reconcileLocale(db: Db, locale: Locale, signal?: AbortSignal): Promise<{ sent: number; deleted: number }> {
    const live = indexUid(this.indexPrefix, locale);
    const indexed = new Map<number, unknown>();
    for (let offset = 0; ; offset += LIST_PAGE) {
      signal?.throwIfAborted();
      const page = await this.client.index(live).getDocuments({ fields: ['id', 'h'], limit: LIST_PAGE, offset });
      for (const doc of page.results) indexed.set(Number(doc['id']), doc['h']);
      if (page.results.length < LIST_PAGE) break;
    }
    const seen = new Set<number>();
    function* differing(): Generator<MeiliDocument> {
      for (const doc of rowsOfLocale(db, locale)) {
        seen.add(doc.id);
        if (indexed.get(doc.id) !== doc.h) yield doc;
      }
    }
    // The uploads first (the generator fills `seen`), then the deletions of what is left over.
    const tasks: PendingTask[] = [];
    let bytes = 0;
    let sent = 0;
    for (const batch of documentBatches(differing(), this.config.batchSize, this.config.batchBytes)) {
      signal?.throwIfAborted();
      tasks.push(await this.upload(live, batch));
      bytes += batch.bytes;
      sent += batch.count;
    }
    const stale = [...indexed.keys()].filter((id) => !seen.has(id));
    const before = markUnsynced(db, locale, stale, now());
    for (const ids of chunks(stale, this.config.batchSize)) {
      signal?.throwIfAborted();
      const task = await this.client.index(live).deleteDocuments(ids);
      tasks.push({ taskUid: task.taskUid, what: `delete ${ids.length} documents from ${live}` });
    }
    await waitAllSucceeded(this.client, tasks, this.documentWaitMs(bytes));
    restoreUnsynced(db, locale, before, now());
    if (sent > 0 || stale.length > 0) this.logger.info({ index: live, sent, deleted: stale.length }, `search index ${live}: sent the difference with the snapshot`);
    return { sent, deleted: stale.length };
  }

  /** Uploads documents and deletes ids in a live index; waits for all of it. Returns the documents sent. */
  private async send(live: string, documents: Iterable<MeiliDocument>, removedIds: readonly number[], signal?: AbortSignal): Promise<number> {
    const tasks: PendingTask[] = [];
    let bytes = 0;
    let sent = 0;
    for (const batch of documentBatches(documents, this.config.batchSize, this.config.batchBytes)) {
      signal?.throwIfAborted();
      tasks.push(await this.upload(live, batch));
      bytes += batch.bytes;
      sent += batch.count;
    }
    for (const ids of chunks(removedIds, this.config.batchSize)) {
      signal?.throwIfAborted();
      const task = await this.client.index(live).deleteDocuments(ids);
      tasks.push({ taskUid: task.taskUid, what: `delete ${ids.length} documents from ${live}` });
    }
    await waitAllSucceeded(this.client, tasks, this.documentWaitMs(bytes));
    return sent;
  }

  private async rebuildLocale(db: Db, locale: Locale, version: ServerVersion, signal?: AbortSignal): Promise<number> {
    const live = indexUid(this.indexPrefix, locale);
    const next = `${live}_next`;
    // A previous rebuild may have died half-way: start its scratch index afresh.
    await this.deleteIfExists(next);
    await this.wait(await this.client.createIndex(next, { primaryKey: 'id' }), `create ${next}`);
    await this.wait(await this.client.index(next).updateSettings(this.config.settings(locale)), `settings of ${next}`);

    // Uploads are sent one request at a time (their tasks are awaited together below): memory
    // holds one upload, and a failed request leaves no other request's rejection unobserved,
    // which would end the worker process as an unhandled rejection.
    const pending: PendingTask[] = [];
    let count = 0;
    let bytes = 0;
    for (const batch of documentBatches(rowsOfLocale(db, locale), this.config.batchSize, this.config.batchBytes)) {
      signal?.throwIfAborted();
      pending.push(await this.upload(next, batch));
      count += batch.count;
      bytes += batch.bytes;
    }
    await waitAllSucceeded(this.client, pending, this.documentWaitMs(bytes));

    if (await this.exists(live)) {
      // `{ indexes }` alone: every version reads it, `rename` defaults to false from 1.18 on.
      await this.wait(await this.client.swapIndexes([{ indexes: [live, next] } as never]), `swap ${live} and ${next}`);
      await this.wait(await this.client.deleteIndex(next), `delete ${next}`);
    } else if (version.swapRename) {
      // The very first rebuild: the full index takes the live name, no empty index in between.
      await this.wait(await this.client.swapIndexes([{ indexes: [next, live], rename: true }]), `rename ${next} to ${live}`);
    } else {
      // Before 1.18 a swap needs both indexes: an empty live one is created just for it.
      await this.wait(await this.client.createIndex(live, { primaryKey: 'id' }), `create ${live}`);
      await this.wait(await this.client.swapIndexes([{ indexes: [live, next] } as never]), `swap ${live} and ${next}`);
      await this.wait(await this.client.deleteIndex(next), `delete ${next}`);
    }
    // What the new index was built with: a later engine version or document format rebuilds it.
    setWorkerState(db, indexedWithKey(locale), indexedWithStamp(version), now());
    // Nothing of the old index is left to hide.
    restoreUnsynced(db, locale, [], now());
    this.logger.info({ index: live, documents: count, bytes }, `rebuilt search index ${live}`);
    return count;
  }

  /** One upload, with a request timeout of its own: the worker's, plus time for its megabytes. */
  private async upload(uid: string, batch: DocumentBatch): Promise<PendingTask> {
    const timeoutMs = this.connection.timeoutMs + Math.ceil((batch.bytes / MB) * this.config.uploadTimeoutMsPerMb);
    const client = timeoutMs === this.connection.timeoutMs ? this.client : createMeiliClient({ ...this.connection, timeoutMs });
    const task = await client.index(uid).addDocumentsFromString(batch.json, 'application/json', { primaryKey: 'id' });
    return { taskUid: task.taskUid, what: `add ${batch.count} documents (${(batch.bytes / MB).toFixed(1)} MB) to ${uid}` };
  }

  /** How long tasks carrying `bytes` of documents may take, all together. */
  private documentWaitMs(bytes: number): number {
    return this.config.taskTimeoutMs + Math.ceil((bytes / MB) * this.config.taskTimeoutMsPerMb);
  }

  private async checkVersion(): Promise<ServerVersion> {
    const version = await fetchServerVersion(this.client);
    if (version.text !== this.version?.text) {
      this.logger.info({ meilisearch: version.text, swapRename: version.swapRename }, `Meilisearch ${version.text}`);
    }
    this.version = version;
    return version;
  }

  private async wait(task: { taskUid: number }, what: string): Promise<void> {
    await waitSucceeded(this.client, task.taskUid, this.config.taskTimeoutMs, what);
  }

  private async exists(uid: string): Promise<boolean> {
    try {
      await this.client.getRawIndex(uid);
      return true;
    } catch (error) {
      if ((error as { cause?: { code?: string } }).cause?.code === 'index_not_found') return false;
      throw error;
    }
  }

  private async deleteIfExists(uid: string): Promise<void> {
    if (await this.exists(uid)) await this.wait(await this.client.deleteIndex(uid), `delete ${uid}`);
  }

  /**
   * Finished tasks are kept by Meilisearch until deleted; without this the task queue of an
   * index synced every five minutes grows forever. Only tasks of our indexes are deleted, and
   * finished task deletions: those belong to no index, so ours cannot be told from others'
   * (deleting the record of a finished deletion loses nothing).
   */
  private async cleanTasks(before: Date): Promise<void> {
    const uids = LOCALES.flatMap((l) => [indexUid(this.indexPrefix, l), `${indexUid(this.indexPrefix, l)}_next`]);
    const finished = (): DeleteOrCancelTasksQuery => ({
      statuses: ['succeeded', 'failed', 'canceled'],
      beforeEnqueuedAt: before.toISOString(),
    });
    await this.wait(await this.client.tasks.deleteTasks({ ...finished(), indexUids: uids }), 'delete finished tasks');
    // The filter above never matches the previous runs' own deletion tasks: without this, each
    // run would leave one more behind, forever.
    await this.wait(await this.client.tasks.deleteTasks({ ...finished(), types: ['taskDeletion'] }), 'delete finished task deletions');
  }

  private async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (isOwnMeiliError(error) || (error as Error)?.name === 'AbortError') throw error;
      throw new Error(describeMeiliError(error));
    }
  }
}

const now = () => formatUtcSeconds(Date.now());
const EMPTY: LocaleChanges = { upsertedIds: [], removedIds: [] };
// Documents listed per request when a full sync compares an index with the snapshot.
const LIST_PAGE = 1000;

/** The worker-state key holding what a locale's live index was built with. */
export const indexedWithKey = (locale: Locale) => `meilisearch_indexed_with_${locale}`;

/**
 * The engine version and document format an index was built with, e.g. `1.19.0 format 2`. A
 * dumpless upgrade keeps the documents as the old version tokenized them: a different stamp
 * rebuilds the index, so the new tokenizer reaches every document.
 */
export const indexedWithStamp = (version: ServerVersion) => `${version.text} format ${DOCUMENT_FORMAT}`;

function* rowsOfLocale(db: Db, locale: Locale): Generator<ReturnType<typeof toMeiliDocument>> {
  for (let after = 0; ; ) {
    const rows: SearchDocumentRow[] = searchDocumentsAfter(db, locale, after, READ_ROWS);
    if (rows.length === 0) return;
    for (const row of rows) yield toMeiliDocument(row);
    after = rows[rows.length - 1]!.id;
  }
}

function* rowsByIds(db: Db, ids: readonly number[]): Generator<ReturnType<typeof toMeiliDocument>> {
  for (const part of chunks(ids, READ_ROWS)) for (const row of searchDocumentsByIds(db, part)) yield toMeiliDocument(row);
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
