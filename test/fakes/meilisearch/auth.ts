/**
 * API keys as the engine checks them (meilisearch `extractors/authentication`, `auth/src`):
 * without a master key everything is open; with one, every route but `/health` needs a bearer
 * key, either the master key (everything) or an API key whose `actions` include the route's
 * action and whose `indexes` cover the index it touches. A missing header is 401
 * `missing_authorization_header`; an unknown key and a key without the right are both 403
 * `invalid_api_key` (the engine does not tell them apart).
 */
import { MeiliError } from './errors.js';

export interface FakeApiKey {
  key: string;
  /** e.g. `["search"]`, `["*"]`, `["documents.*", "tasks.get"]`. */
  actions: string[];
  /** Index uids or patterns ending in `*`: `["articles_*"]`, `["*"]`. */
  indexes: string[];
}

export interface AuthTarget {
  action: string;
  /** Indexes the request touches; empty for routes outside any index (tasks, version). */
  indexes: string[];
}

const INVALID = () => new MeiliError(403, 'invalid_api_key', 'The provided API key is invalid.');

/** The action a route needs, as the engine's `ActionPolicy` guards declare it. */
export function authTarget(method: string, segments: string[], body: unknown): AuthTarget {
  const [root, uid, sub] = segments;
  const m = method;
  switch (root) {
    case 'version':
      return { action: 'version', indexes: [] };
    case 'stats':
      return { action: 'stats.get', indexes: [] };
    case 'multi-search': {
      const queries = (body as { queries?: { indexUid?: unknown }[] } | undefined)?.queries;
      const uids = Array.isArray(queries) ? queries.map((q) => String(q?.indexUid)) : [];
      return { action: 'search', indexes: uids };
    }
    case 'swap-indexes': {
      const uids = Array.isArray(body) ? body.flatMap((s: { indexes?: unknown }) => (Array.isArray(s?.indexes) ? s.indexes.map(String) : [])) : [];
      return { action: 'indexes.swap', indexes: uids };
    }
    case 'tasks':
      if (uid === 'cancel') return { action: 'tasks.cancel', indexes: [] };
      return { action: m === 'DELETE' ? 'tasks.delete' : 'tasks.get', indexes: [] };
    case 'keys':
      return { action: `keys.${m === 'GET' ? 'get' : m === 'POST' ? 'create' : m === 'PATCH' ? 'update' : 'delete'}`, indexes: [] };
    case 'indexes': {
      if (uid === undefined) {
        const created = (body as { uid?: unknown } | undefined)?.uid;
        return m === 'POST' ? { action: 'indexes.create', indexes: [String(created)] } : { action: 'indexes.get', indexes: [] };
      }
      const on = [uid];
      if (sub === undefined) {
        const action = m === 'GET' ? 'indexes.get' : m === 'PATCH' ? 'indexes.update' : 'indexes.delete';
        return { action, indexes: on };
      }
      if (sub === 'search') return { action: 'search', indexes: on };
      if (sub === 'stats') return { action: 'stats.get', indexes: on };
      if (sub === 'settings') return { action: m === 'GET' ? 'settings.get' : 'settings.update', indexes: on };
      if (sub === 'documents') {
        const leaf = segments[3];
        if (m === 'GET' || (m === 'POST' && leaf === 'fetch')) return { action: 'documents.get', indexes: on };
        if (m === 'POST' && (leaf === 'delete-batch' || leaf === 'delete')) return { action: 'documents.delete', indexes: on };
        if (m === 'DELETE') return { action: 'documents.delete', indexes: on };
        return { action: 'documents.add', indexes: on };
      }
      return { action: '*', indexes: on };
    }
  }
  return { action: '*', indexes: [] };
}

const allows = (granted: string[], action: string): boolean =>
  granted.some((g) => g === '*' || g === action || (g.endsWith('.*') && action.startsWith(g.slice(0, -1))));

const covers = (patterns: string[], uid: string): boolean =>
  patterns.some((p) => p === '*' || p === uid || (p.endsWith('*') && uid.startsWith(p.slice(0, -1))));

/** Throws the engine's auth error unless the header's key may do `target`. */
export function authorize(header: string | undefined, masterKey: string, keys: readonly FakeApiKey[], target: AuthTarget): void {
  if (header === undefined) {
    throw new MeiliError(401, 'missing_authorization_header', 'The Authorization header is missing. It must use the bearer authorization method.');
  }
  const token = /^Bearer (.+)$/.exec(header)?.[1];
  if (token === undefined) throw INVALID();
  if (token === masterKey) return;
  // The master key alone may manage keys.
  if (target.action.startsWith('keys.')) throw INVALID();
  const key = keys.find((k) => k.key === token);
  if (!key || !allows(key.actions, target.action)) throw INVALID();
  if (!target.indexes.every((uid) => covers(key.indexes, uid))) throw INVALID();
}
