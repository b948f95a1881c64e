import type { DeleteOrCancelTasksQuery, EnqueuedTask, Meilisearch } from 'meilisearch';
import type { Db } from '../../db/connection.js';
import { searchDocumentsAfter, searchDocumentsByIds, type SearchDocumentRow } from '../../db/search-documents.js';
import { LOCALES, type Locale } from '../../locale.js';
import type { Logger } from '../../logger.js';
import { parseIsoToMs } from '../../time.js';
import type { LocaleChanges, SearchIndexer } from '../indexer.js';
import { describeMeiliError, indexUid, MeiliTaskError, waitSucceeded } from './client.js';
import type { MeiliIndexConfig } from './settings.js';

export interface MeiliDocument {
  id: number;
  slug: string;
  title: string;
  excerpt: string;
  body: string;
  section_slug: string | null;
  section_name: string;
  author: string;
  /** Epoch seconds, for the `published_at_ts <= now` filter and the newest-first tie-break. */
  published_at_ts: number | null;
}

export function toMeiliDocument(row: SearchDocumentRow): MeiliDocument {
  const published = row.published_at === null ? undefined : parseIsoToMs(row.published_at);
  return {
    id: row.id,
    slug: row.slug,
    title: row.title,
    excerpt: row.excerpt,
    body: row.body,
    section_slug: row.section_slug,
    section_name: row.section_name ?? '',
    author: row.author,
    published_at_ts: published === undefined ? null : Math.floor(published / 1000),
  };
}

/**
 * Keeps Meilisearch in step with the snapshot, after each commit. Every task is awaited and
 * checked (a failed task does not throw in the client); a full rebuild fills a fresh index
 * beside the live one and swaps them atomically, so searches never see a half-built index.
 */
export class MeilisearchIndexer implements SearchIndexer {
  readonly name = 'meilisearch';

  constructor(
    private readonly client: Meilisearch,
    private readonly indexPrefix: string,
    private readonly config: MeiliIndexConfig,
    private readonly logger: Logger,
  ) {}

  async update(db: Db, changes: Map<Locale, LocaleChanges>, signal?: AbortSignal): Promise<void> {
    await this.guard(async () => {
      const since = new Date();
      for (const [locale, change] of changes) {
        const index = this.client.index(indexUid(this.indexPrefix, locale));
        const tasks: { task: EnqueuedTask; what: string }[] = [];
        for (const ids of chunks(change.upsertedIds, this.config.batchSize)) {
          signal?.throwIfAborted();
          const documents = searchDocumentsByIds(db, ids).map(toMeiliDocument);
          tasks.push({ task: await index.addDocuments(documents, { primaryKey: 'id' }), what: `add ${documents.length} documents to ${index.uid}` });
        }
        for (const ids of chunks(change.removedIds, this.config.batchSize)) {
          signal?.throwIfAborted();
          tasks.push({ task: await index.deleteDocuments(ids), what: `delete ${ids.length} documents from ${index.uid}` });
        }
        for (const { task, what } of tasks) await this.wait(task, what);
      }
      await this.cleanTasks(since);
    });
  }

  async rebuild(db: Db, signal?: AbortSignal): Promise<{ documents: number }> {
    return this.guard(async () => {
      const since = new Date();
      let documents = 0;
      for (const locale of LOCALES) {
        signal?.throwIfAborted();
        documents += await this.rebuildLocale(db, locale, signal);
      }
      await this.cleanTasks(since);
      return { documents };
    });
  }

  private async rebuildLocale(db: Db, locale: Locale, signal?: AbortSignal): Promise<number> {
    const live = indexUid(this.indexPrefix, locale);
    const next = `${live}_next`;
    // A previous rebuild may have died half-way: start its scratch index afresh.
    await this.deleteIfExists(next);
    await this.wait(await this.client.createIndex(next, { primaryKey: 'id' }), `create ${next}`);
    await this.wait(await this.client.index(next).updateSettings(this.config.settings(locale)), `settings of ${next}`);

    const index = this.client.index(next);
    const pending: { task: EnqueuedTask; what: string }[] = [];
    let count = 0;
    // Batches are sent one request at a time (their tasks are awaited together below): memory
    // holds one batch, and a failed request leaves no other request's rejection unobserved, which
    // would end the worker process as an unhandled rejection.
    for (let after = 0; ; ) {
      signal?.throwIfAborted();
      const rows = searchDocumentsAfter(db, locale, after, this.config.batchSize);
      if (rows.length === 0) break;
      pending.push({ task: await index.addDocuments(rows.map(toMeiliDocument), { primaryKey: 'id' }), what: `add ${rows.length} documents to ${next}` });
      count += rows.length;
      after = rows[rows.length - 1]!.id;
    }
    for (const { task, what } of pending) await this.wait(task, what);

    // Swapping needs both indexes to exist; the very first rebuild has no live one yet.
    if (!(await this.exists(live))) {
      await this.wait(await this.client.createIndex(live, { primaryKey: 'id' }), `create ${live}`);
    }
    await this.wait(await this.client.swapIndexes([{ indexes: [live, next], rename: false }]), `swap ${live} and ${next}`);
    await this.wait(await this.client.deleteIndex(next), `delete ${next}`);
    this.logger.info({ index: live, documents: count }, `rebuilt search index ${live}`);
    return count;
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
      if (error instanceof MeiliTaskError || (error as Error)?.name === 'AbortError') throw error;
      throw new Error(describeMeiliError(error));
    }
  }
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
