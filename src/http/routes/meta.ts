import { Router, type Response } from 'express';
import { feedStats } from '../../db/snapshot/feed.js';
import type { KeysStore } from '../../db/keys/keys-store.js';
import type { SnapshotStore } from '../../db/snapshot/snapshot-store.js';
import { ServiceUnavailableError } from '../../errors.js';
import type { SearchEngine } from '../../search/engine.js';
import { formatUtcSeconds, type Clock } from '../../lib/time.js';
import { buildOpenApiDocument } from '../contract/openapi.js';
import { represent, sendRepresentation } from '../cache/representation.js';
import type { Health } from '../contract/response-schemas.js';
import type { StopNotice } from '../server/stop-notice.js';
import { ROUTES } from '../endpoints/routes-table.js';
import { problemsOf, snapshotHealth } from './service-state.js';

export interface MetaDeps {
  store: SnapshotStore;
  /** Every /api/v1 request needs it: /health must fail when it does. */
  keysStore: KeysStore;
  engine: SearchEngine;
  clock: Clock;
  /** Past this age of the snapshot /health says `degraded`. */
  snapshotMaxAgeSeconds: number;
  /** PUBLIC_BASE_URL, the OpenAPI document's server address. */
  publicBaseUrl: string;
  /** Once the process is stopping, /health answers 503 `draining` (the balancer's cue). */
  stopNotice: StopNotice;
}

type SearchHealth = Health['search'];

/** The two endpoints that need no key: health for operators, the OpenAPI document for developers. */
export function metaRoutes(deps: MetaDeps): Router {
  const router = Router();
  // The same for everyone and needs no key: shared caches may keep it (no Vary: X-API-Key).
  const openapi = represent(buildOpenApiDocument({ serverUrl: deps.publicBaseUrl }), undefined, { keyless: true });
  const startedAt = deps.clock();

  // 200 while the snapshot can be read, `degraded` when something needs an operator; 503 only
  // when the snapshot cannot answer, so load balancers take a process out of rotation only
  // when it really cannot serve (the contract's rule). A keys database that cannot be used
  // makes every /api/v1 request a 503 but is shared by every host, so taking hosts out would
  // not help: it is `degraded`, which alerts, with the reason.
  router.get(ROUTES.health.path, async (_req, res) => {
    deps.stopNotice.healthChecked();
    const search = await deps.engine.health();
    res.setHeader('Cache-Control', 'no-store');
    if (deps.stopNotice.stopping) {
      // Every other request is still answered: this only takes the process out of rotation.
      res.status(503).json({ status: 'draining', problems: [DRAINING], search } satisfies Health);
      return;
    }
    let body: Health;
    try {
      body = snapshotBody(deps, search);
    } catch (error) {
      sendUnavailable(res, unavailableOr(deps.store.failure(error)), search);
      return;
    }
    const keysProblem = keysDatabaseProblem(deps.keysStore);
    if (keysProblem) body = { ...body, status: 'degraded', problems: [...(body.problems ?? []), keysProblem] };
    res.status(200).json(body);
  });

  router.get(ROUTES.openapi.path, (req, res) => {
    sendRepresentation(req, res, openapi, startedAt);
  });

  return router;
}

const DRAINING = 'The process is stopping: it still answers requests, and stops accepting connections shortly (SHUTDOWN_DELAY_MS).';

/** The 200 body, `ok` or `degraded`; throws when the snapshot cannot be read or was never synced. */
function snapshotBody(deps: MetaDeps, search: SearchHealth): Health {
  const { db } = deps.store.probe();
  const snapshot = snapshotHealth(db, deps.clock(), deps.snapshotMaxAgeSeconds);
  if (!snapshot) {
    throw new ServiceUnavailableError('The snapshot has not been synced yet.', 'no sync has completed yet');
  }
  const problems = problemsOf(snapshot);
  const stats = feedStats(db);
  const feed = {
    entries: stats.entries,
    oldest_delete_at: stats.oldestDeleteMs === null ? null : formatUtcSeconds(stats.oldestDeleteMs),
  };
  return problems.length === 0
    ? { status: 'ok', snapshot, search, feed }
    : { status: 'degraded', problems, snapshot, search, feed };
}

/** Why the keys database cannot be used (no path, no SQL), or undefined when it can. */
function keysDatabaseProblem(keysStore: KeysStore): string | undefined {
  try {
    keysStore.probe();
    return undefined;
  } catch (error) {
    const failure = unavailableOr(keysStore.failure(error));
    return `The keys database is unavailable: ${failure.reason}; every /api/v1 request answers 503 until it is back.`;
  }
}

/** A store failure as the stores map it; anything else is a bug and goes on to the error handler. */
function unavailableOr(failure: unknown): ServiceUnavailableError {
  if (failure instanceof ServiceUnavailableError) return failure;
  throw failure;
}

// The stores' reasons name no path and no SQL (they are written for this body and the log).
function sendUnavailable(res: Response, failure: ServiceUnavailableError, search: SearchHealth): void {
  res.status(503).json({
    status: 'unavailable',
    error: { code: failure.code, message: `The snapshot is unavailable: ${failure.reason}.` },
    search,
  } satisfies Health);
}
