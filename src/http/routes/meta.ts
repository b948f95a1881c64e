import { Router } from 'express';
import { snapshotStates } from '../../db/content.js';
import { feedStats } from '../../db/feed.js';
import type { SnapshotStore } from '../../db/snapshot-store.js';
import { lastSuccessfulCmsRun } from '../../db/sync-runs.js';
import { ServiceUnavailableError } from '../../errors.js';
import type { SearchEngine } from '../../search/engine.js';
import { formatUtcSeconds, parseIsoToMs, type Clock } from '../../time.js';
import { buildOpenApiDocument } from '../openapi.js';
import { represent, sendRepresentation } from '../representation.js';
import type { Health } from '../response-schemas.js';

const ageSeconds = (iso: string, now: number) => Math.max(0, Math.round((now - (parseIsoToMs(iso) ?? now)) / 1000));

/** The two endpoints that need no key: health for operators, the OpenAPI document for developers. */
export function metaRoutes(deps: { store: SnapshotStore; engine: SearchEngine; clock: Clock }): Router {
  const router = Router();
  const openapi = represent(buildOpenApiDocument());
  const startedAt = deps.clock();

  router.get('/health', async (_req, res) => {
    const search = await deps.engine.health();
    const now = deps.clock();
    res.setHeader('Cache-Control', 'no-store');
    let body: Health;
    try {
      const { db } = deps.store.probe();
      const states = snapshotStates(db);
      if (states.length === 0) {
        throw new ServiceUnavailableError('The snapshot has not been synced yet.', 'no sync has completed yet');
      }
      // The last time content came from the CMS: a --reindex does not make it fresher.
      const run = lastSuccessfulCmsRun(db);
      const feed = feedStats(db);
      body = {
        status: 'ok',
        snapshot: {
          locales: Object.fromEntries(
            states.map((s) => [
              s.locale,
              { synced_at: s.syncedAt, age_seconds: ageSeconds(s.syncedAt, now), changed_at: s.changedAt },
            ]),
          ),
          last_sync:
            run?.finishedAt != null
              ? { kind: run.kind, finished_at: run.finishedAt, age_seconds: ageSeconds(run.finishedAt, now) }
              : null,
        },
        search,
        feed: {
          entries: feed.entries,
          oldest_delete_at: feed.oldestDeleteMs === null ? null : formatUtcSeconds(feed.oldestDeleteMs),
        },
      };
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
