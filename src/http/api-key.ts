import type { RequestHandler, Response } from 'express';
import type { KeysStore } from '../db/keys-store.js';
import type { SnapshotStore, StoreSession } from '../db/snapshot-store.js';
import type { KeyVerifier } from '../keys/verifier.js';

/**
 * Checks the partner's key before anything else about the request. The key is read from the
 * X-API-Key header only, and checked against the keys database. Both stores are opened
 * first: if either cannot answer, the request gets a 503, never a 401, so no partner is
 * refused because of our own failure.
 */
export function requireApiKey(store: SnapshotStore, keysStore: KeysStore, keys: KeyVerifier): RequestHandler {
  return (req, res, next) => {
    const session = store.session();
    res.locals.keyId = keys.verify(req.headers['x-api-key'] as string | undefined, keysStore.session()).id;
    res.locals.session = session;
    next();
  };
}

/** The store session opened for this request by requireApiKey. */
export function sessionOf(res: Response): StoreSession {
  return res.locals.session as StoreSession;
}
