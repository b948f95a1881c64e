import { Router } from 'express';
import { feedStats } from '../../db/feed.js';
import type { SnapshotStore } from '../../db/snapshot-store.js';
import { ServiceUnavailableError } from '../../errors.js';
import type { SearchEngine } from '../../search/engine.js';
import { formatUtcSeconds, type Clock } from '../../time.js';
import { buildOpenApiDocument } from '../openapi.js';
import { represent, sendRepresentation } from '../representation.js';
import type { Health } from '../response-schemas.js';
import { problemsOf, snapshotHealth } from '../service-state.js';

export interface MetaDeps {
  store: SnapshotStore;
  engine: SearchEngine;
  clock: Clock;
  /** Past this age of the snapshot /health says `degraded`. */
  snapshotMaxAgeSeconds: number;
  /** PUBLIC_BASE_URL, the OpenAPI document's server address. */
  publicBaseUrl: string;
}

/** The two endpoints that need no key: health for operators, the OpenAPI document for developers. */
export function metaRoutes(deps: MetaDeps): Router {
  const router = Router();
  const openapi = represent(buildOpenApiDocument({ serverUrl: deps.publicBaseUrl }));
  const startedAt = deps.clock();

  // 200 while the snapshot can be read, `degraded` when something needs an operator (the
  // API still serves); 503 only when the store cannot answer, so load balancers take a
  // process out of rotation only when it really cannot serve.
  router.get('/health', async (_req, res) => {
    const search = await deps.engine.health();
    const now = deps.clock();
    res.setHeader('Cache-Control', 'no-store');
    let body: Health;
    try {
      const { db } = deps.store.probe();
      const snapshot = snapshotHealth(db, now, deps.snapshotMaxAgeSeconds);
      if (!snapshot) {
        throw new ServiceUnavailableError('The snapshot has not been synced yet.', 'no sync has completed yet');
      }
      const problems = problemsOf(snapshot);
      const stats = feedStats(db);
      const feed = {
        entries: stats.entries,
        oldest_delete_at: stats.oldestDeleteMs === null ? null : formatUtcSeconds(stats.oldestDeleteMs),
      };
      body =
        problems.length === 0
          ? { status: 'ok', snapshot, search, feed }
          : { status: 'degraded', problems, snapshot, search, feed };
    } catch (error) {
      const failure = deps.store.failure(error);
      if (!(failure instanceof ServiceUnavailableError)) throw failure;
      res.status(503).json({
        status: 'unavailable',
        error: { code: failure.code, message: `The snapshot is unavailable: ${failure.reason}.` },
        search,
      } satisfies Health);
      return;
    }
    res.status(200).json(body);
  });

  router.get('/api/v1/openapi.json', (req, res) => {
    sendRepresentation(req, res, openapi, startedAt);
  });

  return router;
}
