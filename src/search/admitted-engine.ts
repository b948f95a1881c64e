import { snapshotReplaced, type StoreSession } from '../db/snapshot/snapshot-store.js';
import { Admission, type AdmissionLimits } from './admission.js';
import type { EngineHealth, SearchEngine, SearchPage, SearchQuery } from './engine.js';

/**
 * Any engine behind admission control (src/search/admission.ts): the embedded pool and
 * Meilisearch get the same bounds, and routes do not know which one answers. Searches are
 * shared out by the partner's key id.
 */
export class AdmittedEngine implements SearchEngine {
  readonly name: SearchEngine['name'];
  readonly followsSnapshot: boolean;
  readonly admission: Admission;

  constructor(
    private readonly inner: SearchEngine,
    limits: AdmissionLimits,
  ) {
    this.name = inner.name;
    this.followsSnapshot = inner.followsSnapshot;
    this.admission = new Admission(limits);
  }

  search(session: StoreSession, query: SearchQuery): Promise<SearchPage> {
    const key = query.keyId === undefined ? 'unknown' : `key:${query.keyId}`;
    return this.admission.run(key, async (signal) => {
      // A search that waited for its slot may hold a session whose connection a later request
      // closed (the snapshot file was replaced): reading through it would be a 500.
      if (!session.db.$client.open) throw snapshotReplaced();
      return this.inner.search(session, { ...query, signal });
    });
  }

  health(): Promise<EngineHealth> {
    return this.inner.health();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  start(): Promise<void> {
    return this.inner.start?.() ?? Promise.resolve();
  }

  /** Admission figures (in_flight, queued, refused_*), then the engine's own. */
  stats(): Record<string, number> {
    return { ...this.admission.stats(), ...(this.inner.stats?.() ?? {}) };
  }
}
