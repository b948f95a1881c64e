import { writeTransaction, type Db } from '../src/db/sqlite/connection.js';
import { markAllChanged } from '../src/db/snapshot/snapshot-write.js';
import type { ListLimits } from '../src/search/sqlite/common-lists.js';
import { beginIndexChanges, finishIndexChanges, rebuildIndex } from '../src/search/sqlite/sqlite-index.js';

/**
 * Rebuilds the embedded full-text index from the articles table, in one transaction: after a
 * change to how text is segmented, or to repair an index, without calling the CMS.
 */
export function rebuildEmbeddedIndex(db: Db, nowIso: string, listLimits?: ListLimits): number {
  return writeTransaction(db, () => {
    // Readers cache search results per content version: a rebuilt index is a new version, or a
    // running API would keep serving what it ranked from the old (perhaps broken) index.
    markAllChanged(db, nowIso);
    const changes = beginIndexChanges(db, listLimits);
    const count = rebuildIndex(db, changes);
    // The champion lists are recomputed from the new index, in the same transaction.
    finishIndexChanges(db, changes);
    return count;
  });
}
