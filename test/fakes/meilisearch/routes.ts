/** The HTTP API: one function from a parsed request to a status and a JSON body. */
import { badRequest, describeJson, indexNotFound, invalidType, MeiliError, notImplemented, unknownField } from './errors.js';
import type { Engine } from './engine.js';
import { checkFilterable, evaluate, parseFilter } from './search/filter.js';
import { selectAttributes } from './search/format.js';
import { runSearch } from './search/search.js';
import { searchGetToBody } from './search/search-params.js';
import { SETTINGS_KEYS, SETTINGS_ROUTES, validateSettingsPatch, validateSettingValue, type SettingsPatch } from './settings.js';
import { indexView, type IndexState } from './state.js';
import { parseTaskQuery, taskView, type IndexSwapSpec } from './tasks.js';
import { invalidIndexUidMessage, isPlainObject, isValidIndexUid, type Doc } from './values.js';

export interface ApiRequest {
  method: string;
  segments: string[];
  query: URLSearchParams;
  rawQuery: string;
  contentType: string | undefined;
  rawBody: string;
}

export interface ApiResponse {
  status: number;
  body?: unknown;
}

const ok = (body: unknown): ApiResponse => ({ status: 200, body });
const accepted = (body: unknown): ApiResponse => ({ status: 202, body });
const methodNotAllowed = (): ApiResponse => ({ status: 405 });

/** JSON body of a non-document route: deserr's `bad_request` on malformed JSON, `missing_payload` when empty. */
function jsonBody(req: ApiRequest, required = true): unknown {
  if (req.rawBody.trim() === '') {
    if (!required) return undefined;
    throw badRequest('missing_payload', 'A json payload is missing.');
  }
  try {
    return JSON.parse(req.rawBody) as unknown;
  } catch (err) {
    throw badRequest('bad_request', `Json deserialize error: ${(err as Error).message}`);
  }
}

function checkParams(req: ApiRequest, allowed: readonly string[]): void {
  for (const key of req.query.keys()) {
    if (!allowed.includes(key)) {
      throw badRequest('bad_request', `Unknown parameter \`${key}\`: expected one of ${allowed.map((p) => `\`${p}\``).join(', ')}`);
    }
  }
}

function uintParam(req: ApiRequest, name: string, fallback: number, code: string): number {
  const raw = req.query.get(name);
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw)) throw badRequest(code, `Invalid value in parameter \`${name}\`: could not parse \`${raw}\` as a positive integer`);
  return Number(raw);
}

function validUid(uid: string): string {
  if (!isValidIndexUid(uid)) throw badRequest('invalid_index_uid', invalidIndexUidMessage(uid));
  return uid;
}

const ACCEPTED_TYPES = 'Accepted values for the Content-Type header are: `application/json`, `application/x-ndjson`, `text/csv`';

/** Documents payload: JSON (array or single object) or NDJSON; CSV is not modelled. */
function documentsPayload(req: ApiRequest): Doc[] {
  const type = req.contentType?.split(';')[0]?.trim().toLowerCase();
  if (type === undefined || type === '') throw new MeiliError(415, 'missing_content_type', `A Content-Type header is missing. ${ACCEPTED_TYPES}`);
  if (type === 'text/csv') throw notImplemented('CSV document payloads');
  if (type !== 'application/json' && type !== 'application/x-ndjson') {
    throw new MeiliError(415, 'invalid_content_type', `The Content-Type \`${type}\` is invalid. ${ACCEPTED_TYPES}`);
  }
  const format = type === 'application/json' ? 'json' : 'ndjson';
  if (req.rawBody.trim() === '') throw badRequest('missing_payload', `A ${format} payload is missing.`);
  const malformed = (detail: string): MeiliError =>
    badRequest('malformed_payload', `The \`${format}\` payload provided is malformed. \`Couldn't serialize document value: ${detail}\`.`);
  let docs: unknown[];
  try {
    if (format === 'json') {
      const parsed = JSON.parse(req.rawBody) as unknown;
      docs = Array.isArray(parsed) ? parsed : [parsed];
    } else {
      docs = req.rawBody.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as unknown);
    }
  } catch (err) {
    throw malformed((err as Error).message);
  }
  docs.forEach((d) => {
    if (!isPlainObject(d)) throw malformed(`data are neither an object nor a list of objects`);
  });
  return docs as Doc[];
}

function optionalString(value: unknown, code: string, path: string): string | null | undefined {
  if (value === undefined || value === null) return value as null | undefined;
  if (typeof value !== 'string') throw invalidType(code, path, 'a string', value);
  return value;
}

function documentIdList(body: unknown): string[] {
  if (!Array.isArray(body)) throw badRequest('bad_request', `Json deserialize error: invalid type: ${describeJson(body)}, expected a sequence`);
  return body.map((id) => {
    if (typeof id === 'number' && Number.isInteger(id)) return String(id);
    if (typeof id === 'string') return id.trim();
    throw badRequest('bad_request', `Json deserialize error: invalid type: ${describeJson(id)}, expected a document id (string or integer)`);
  });
}

/** `1.17.2` -> [1, 17, 2]; compares versions the way semver does for plain releases. */
export function versionAtLeast(version: string, minimum: string): boolean {
  const a = version.split(/[.-]/).slice(0, 3).map(Number);
  const b = minimum.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

export class Api {
  constructor(
    private readonly engine: Engine,
    /** The `pkgVersion` this fake pretends to be: payloads follow what that version accepts. */
    public version: string,
  ) {}

  private index(uid: string): IndexState {
    const index = this.engine.indexes.get(validUid(uid));
    if (!index) throw indexNotFound(uid);
    return index;
  }

  private customMetadata(req: ApiRequest): string | undefined {
    return req.query.get('customMetadata') ?? undefined;
  }

  handle(req: ApiRequest): ApiResponse {
    const [root, second, third, fourth, ...rest] = req.segments;
    const m = req.method;
    if (rest.length > 0) throw notImplemented(`${m} /${req.segments.join('/')}`);
    switch (root) {
      case 'health':
        if (second !== undefined) break;
        return m === 'GET' ? ok({ status: 'available' }) : methodNotAllowed();
      case 'version':
        if (second !== undefined) break;
        return m === 'GET' ? ok({ commitSha: 'fake-meilisearch', commitDate: '2025-01-01T00:00:00Z', pkgVersion: this.version }) : methodNotAllowed();
      case 'stats':
        if (second !== undefined) break;
        return m === 'GET' ? ok(this.globalStats()) : methodNotAllowed();
      case 'multi-search':
        if (second !== undefined) break;
        return m === 'POST' ? ok(this.multiSearch(req)) : methodNotAllowed();
      case 'swap-indexes':
        if (second !== undefined) break;
        return m === 'POST' ? accepted(this.swapIndexes(req)) : methodNotAllowed();
      case 'tasks':
        return this.tasksRoute(req, second, third);
      case 'indexes':
        if (second === undefined) {
          if (m === 'GET') return ok(this.listIndexes(req));
          if (m === 'POST') return accepted(this.createIndex(req));
          return methodNotAllowed();
        }
        return this.indexRoute(req, second, third, fourth);
    }
    throw notImplemented(`${m} /${req.segments.join('/')}`);
  }

  private tasksRoute(req: ApiRequest, second: string | undefined, third: string | undefined): ApiResponse {
    const m = req.method;
    if (third !== undefined) throw notImplemented(`${m} /tasks/${second}/${third}`);
    if (second === undefined) {
      if (m === 'GET') return ok(this.listTasks(req));
      if (m === 'DELETE') return ok(this.deleteOrCancelTasks(req, 'taskDeletion'));
      return methodNotAllowed();
    }
    if (second === 'cancel') return m === 'POST' ? ok(this.deleteOrCancelTasks(req, 'taskCancelation')) : methodNotAllowed();
    if (m !== 'GET') return methodNotAllowed();
    if (!/^\d+$/.test(second)) {
      throw badRequest('invalid_task_uids', `Task uid \`${second}\` is invalid. It should only contain numeric characters.`);
    }
    const task = this.engine.task(Number(second));
    if (!task) throw new MeiliError(404, 'task_not_found', `Task \`${second}\` not found.`);
    return ok(taskView(task));
  }

  private indexRoute(req: ApiRequest, uid: string, sub: string | undefined, leaf: string | undefined): ApiResponse {
    const m = req.method;
    if (sub === undefined) {
      if (m === 'GET') return ok(indexView(this.index(uid)));
      if (m === 'PATCH') return accepted(this.updateIndex(req, validUid(uid)));
      if (m === 'DELETE') {
        return accepted(this.engine.enqueue({ type: 'indexDeletion', indexUid: validUid(uid), op: { kind: 'indexDeletion' }, details: { deletedDocuments: null } }));
      }
      return methodNotAllowed();
    }
    switch (sub) {
      case 'search':
        if (leaf !== undefined) break;
        if (m === 'POST') {
          const body = jsonBody(req);
          return ok(runSearch(this.index(uid), body, this.engine.tokenizer, this.engine.degraded));
        }
        if (m === 'GET') return ok(runSearch(this.index(uid), searchGetToBody(req.query), this.engine.tokenizer, this.engine.degraded));
        return methodNotAllowed();
      case 'documents':
        return this.documentsRoute(req, validUid(uid), leaf);
      case 'settings':
        return this.settingsRoute(req, validUid(uid), leaf);
      case 'stats':
        if (leaf !== undefined) break;
        return m === 'GET' ? ok(this.indexStats(this.index(uid))) : methodNotAllowed();
    }
    throw notImplemented(`${m} /indexes/${uid}/${sub}${leaf === undefined ? '' : `/${leaf}`}`);
  }

  private listIndexes(req: ApiRequest): unknown {
    checkParams(req, ['offset', 'limit']);
    const offset = uintParam(req, 'offset', 0, 'invalid_index_offset');
    const limit = uintParam(req, 'limit', 20, 'invalid_index_limit');
    const all = this.engine.indexViews();
    return { results: all.slice(offset, offset + limit), offset, limit, total: all.length };
  }

  private createIndex(req: ApiRequest): unknown {
    checkParams(req, ['customMetadata']);
    const body = jsonBody(req);
    if (!isPlainObject(body)) throw badRequest('bad_request', `Invalid value type: expected an object, but found ${describeJson(body)}`);
    for (const key of Object.keys(body)) if (key !== 'uid' && key !== 'primaryKey') throw unknownField('', key, ['uid', 'primaryKey']);
    if (body['uid'] === undefined) throw badRequest('missing_index_uid', 'Missing field `uid`');
    if (!isValidIndexUid(body['uid'])) throw badRequest('invalid_index_uid', invalidIndexUidMessage(body['uid']));
    const primaryKey = optionalString(body['primaryKey'], 'invalid_index_primary_key', '.primaryKey') ?? null;
    return this.engine.enqueue({
      type: 'indexCreation',
      indexUid: body['uid'],
      op: { kind: 'indexCreation', primaryKey },
      details: { primaryKey },
      customMetadata: this.customMetadata(req),
    });
  }

  private updateIndex(req: ApiRequest, uid: string): unknown {
    const body = jsonBody(req);
    if (!isPlainObject(body)) throw badRequest('bad_request', `Invalid value type: expected an object, but found ${describeJson(body)}`);
    for (const key of Object.keys(body)) if (key !== 'uid' && key !== 'primaryKey') throw unknownField('', key, ['primaryKey', 'uid']);
    const primaryKey = optionalString(body['primaryKey'], 'invalid_index_primary_key', '.primaryKey');
    const newUid = body['uid'];
    if (newUid !== undefined && !isValidIndexUid(newUid)) throw badRequest('invalid_index_uid', invalidIndexUidMessage(newUid));
    const op: { kind: 'indexUpdate'; primaryKey?: string | null; newUid?: string } = { kind: 'indexUpdate' };
    const details: Record<string, unknown> = { primaryKey: primaryKey ?? null };
    if (primaryKey !== undefined) op.primaryKey = primaryKey;
    if (typeof newUid === 'string') {
      op.newUid = newUid;
      details['oldIndexUid'] = uid;
      details['newIndexUid'] = newUid;
    }
    return this.engine.enqueue({ type: 'indexUpdate', indexUid: uid, op, details });
  }

  private documentsRoute(req: ApiRequest, uid: string, leaf: string | undefined): ApiResponse {
    const m = req.method;
    const meta = this.customMetadata(req);
    if (leaf === undefined) {
      if (m === 'GET') return ok(this.fetchDocuments(uid, this.documentsQueryFromParams(req)));
      if (m === 'POST' || m === 'PUT') {
        checkParams(req, ['primaryKey', 'csvDelimiter', 'customMetadata', 'skipCreation']);
        const documents = documentsPayload(req);
        const primaryKey = req.query.get('primaryKey');
        return accepted(
          this.engine.enqueue({
            type: 'documentAdditionOrUpdate',
            indexUid: uid,
            op: { kind: 'documentAdditionOrUpdate', documents, primaryKey, merge: m === 'PUT', skipCreation: req.query.get('skipCreation') === 'true' },
            details: { receivedDocuments: documents.length, indexedDocuments: null },
            customMetadata: meta,
          }),
        );
      }
      if (m === 'DELETE') {
        checkParams(req, ['customMetadata']);
        return accepted(this.engine.enqueue({ type: 'documentDeletion', indexUid: uid, op: { kind: 'documentClear' }, details: { deletedDocuments: null }, customMetadata: meta }));
      }
      return methodNotAllowed();
    }
    if (leaf === 'fetch' && m === 'POST') {
      const body = jsonBody(req, false) ?? {};
      if (!isPlainObject(body)) throw badRequest('bad_request', `Invalid value type: expected an object, but found ${describeJson(body)}`);
      return ok(this.fetchDocuments(uid, body));
    }
    if (leaf === 'delete-batch' && m === 'POST') {
      checkParams(req, ['customMetadata']);
      const ids = documentIdList(jsonBody(req));
      return accepted(
        this.engine.enqueue({
          type: 'documentDeletion',
          indexUid: uid,
          op: { kind: 'documentDeletionByIds', ids },
          details: { providedIds: ids.length, deletedDocuments: null },
          customMetadata: meta,
        }),
      );
    }
    if (leaf === 'delete' && m === 'POST') {
      checkParams(req, ['customMetadata']);
      const body = jsonBody(req);
      if (!isPlainObject(body) || body['filter'] === undefined) throw badRequest('missing_document_filter', 'Missing field `filter`');
      const filter = parseFilter(body['filter'], 'invalid_document_filter');
      return accepted(
        this.engine.enqueue({
          type: 'documentDeletion',
          indexUid: uid,
          op: { kind: 'documentDeletionByFilter', filter },
          details: { providedIds: 0, deletedDocuments: null, originalFilter: JSON.stringify(body['filter']) },
          customMetadata: meta,
        }),
      );
    }
    // Any other leaf is a document id.
    if (m === 'GET') {
      checkParams(req, ['fields', 'retrieveVectors']);
      const doc = this.index(uid).documents.get(leaf);
      if (!doc) throw new MeiliError(404, 'document_not_found', `Document \`${leaf}\` not found.`);
      const fields = req.query.get('fields');
      return ok(selectAttributes(doc, fields === null ? ['*'] : fields.split(',')));
    }
    if (m === 'DELETE') {
      return accepted(
        this.engine.enqueue({
          type: 'documentDeletion',
          indexUid: uid,
          op: { kind: 'documentDeletionByIds', ids: [leaf] },
          details: { providedIds: 1, deletedDocuments: null },
          customMetadata: meta,
        }),
      );
    }
    return methodNotAllowed();
  }

  private documentsQueryFromParams(req: ApiRequest): Record<string, unknown> {
    checkParams(req, ['offset', 'limit', 'fields', 'filter', 'ids', 'retrieveVectors', 'sort']);
    const out: Record<string, unknown> = {
      offset: uintParam(req, 'offset', 0, 'invalid_document_offset'),
      limit: uintParam(req, 'limit', 20, 'invalid_document_limit'),
    };
    const fields = req.query.get('fields');
    if (fields !== null) out['fields'] = fields.split(',');
    const filter = req.query.get('filter');
    if (filter !== null) out['filter'] = filter;
    const ids = req.query.get('ids');
    if (ids !== null) out['ids'] = ids.split(',');
    if (req.query.get('sort') !== null) throw notImplemented('sorting in the documents API');
    return out;
  }

  /** `GET /documents` and `POST /documents/fetch`: paged documents in internal id order. */
  private fetchDocuments(uid: string, q: Record<string, unknown>): unknown {
    const index = this.index(uid);
    const offset = q['offset'] ?? 0;
    const limit = q['limit'] ?? 20;
    if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0) throw invalidType('invalid_document_offset', '.offset', 'a positive integer', offset);
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 0) throw invalidType('invalid_document_limit', '.limit', 'a positive integer', limit);
    if (q['sort'] !== undefined) throw notImplemented('sorting in the documents API');
    const filter = parseFilter(q['filter'], 'invalid_document_filter');
    if (filter) checkFilterable(filter, index.settings, uid, 'invalid_document_filter');
    const ids = Array.isArray(q['ids']) ? new Set((q['ids'] as unknown[]).map(String)) : null;
    const fields = Array.isArray(q['fields']) ? (q['fields'] as string[]) : ['*'];
    const matched = [...index.documents.entries()].filter(([id, doc]) => (ids === null || ids.has(id)) && (!filter || evaluate(filter, doc)));
    return {
      // Only displayed attributes are returned, as in search (routes/indexes/documents.rs).
      results: matched.slice(offset, offset + limit).map(([, doc]) => selectAttributes(selectAttributes(doc, index.settings.displayedAttributes), fields)),
      offset,
      limit,
      total: matched.length,
    };
  }

  private settingsRoute(req: ApiRequest, uid: string, leaf: string | undefined): ApiResponse {
    const m = req.method;
    const enqueue = (patch: SettingsPatch): ApiResponse =>
      accepted(this.engine.enqueue({ type: 'settingsUpdate', indexUid: uid, op: { kind: 'settingsUpdate', patch }, details: structuredClone(patch) }));
    if (leaf === undefined) {
      if (m === 'GET') return ok(structuredClone(this.index(uid).settings));
      if (m === 'PATCH') return enqueue(validateSettingsPatch(jsonBody(req)));
      if (m === 'DELETE') return enqueue(Object.fromEntries(SETTINGS_KEYS.map((k) => [k, null])));
      return methodNotAllowed();
    }
    const route = SETTINGS_ROUTES[leaf];
    if (!route) throw notImplemented(`${m} /indexes/${uid}/settings/${leaf}`);
    if (m === 'GET') return ok(structuredClone(this.index(uid).settings[route.key]));
    if (m === route.method) return enqueue(validateSettingValue(route.key, jsonBody(req)));
    if (m === 'DELETE') return enqueue({ [route.key]: null });
    return methodNotAllowed();
  }

  private indexStats(index: IndexState): Record<string, unknown> {
    const fieldDistribution: Record<string, number> = {};
    for (const doc of index.documents.values()) for (const key of Object.keys(doc)) fieldDistribution[key] = (fieldDistribution[key] ?? 0) + 1;
    const size = [...index.documents.values()].reduce((n, d) => n + Buffer.byteLength(JSON.stringify(d)), 0);
    return {
      numberOfDocuments: index.documents.size,
      rawDocumentDbSize: size,
      avgDocumentSize: index.documents.size === 0 ? 0 : Math.round(size / index.documents.size),
      isIndexing: this.engine.filterTasks({ indexUids: [index.uid], statuses: ['processing'], enqueuedAt: [], startedAt: [], finishedAt: [] }).length > 0,
      numberOfEmbeddings: 0,
      numberOfEmbeddedDocuments: 0,
      fieldDistribution,
    };
  }

  private globalStats(): unknown {
    const indexes: Record<string, unknown> = {};
    let lastUpdate: string | null = null;
    for (const index of this.engine.indexes.values()) {
      indexes[index.uid] = this.indexStats(index);
      if (lastUpdate === null || index.updatedAt.text > lastUpdate) lastUpdate = index.updatedAt.text;
    }
    return { databaseSize: 0, usedDatabaseSize: 0, lastUpdate, indexes };
  }

  private multiSearch(req: ApiRequest): unknown {
    const body = jsonBody(req);
    if (!isPlainObject(body)) throw badRequest('bad_request', `Invalid value type: expected an object, but found ${describeJson(body)}`);
    if (body['federation'] !== undefined && body['federation'] !== null) throw notImplemented('federated multi-search');
    for (const key of Object.keys(body)) if (key !== 'queries' && key !== 'federation') throw unknownField('', key, ['queries', 'federation']);
    const queries = body['queries'];
    if (!Array.isArray(queries)) throw invalidType('invalid_multi_search_queries', '.queries', 'an array', queries);
    return {
      results: queries.map((query: unknown, i) => {
        try {
          if (!isPlainObject(query)) throw invalidType('invalid_multi_search_queries', `.queries[${i}]`, 'an object', query);
          const { indexUid, federationOptions: _ignored, ...search } = query;
          if (typeof indexUid !== 'string') throw badRequest('missing_index_uid', `Missing field \`indexUid\` inside \`.queries[${i}]\``);
          return { indexUid, ...runSearch(this.index(indexUid), search, this.engine.tokenizer, this.engine.degraded) };
        } catch (err) {
          if (err instanceof MeiliError) throw new MeiliError(err.status, err.code, `Inside \`.queries[${i}]\`: ${err.message}`);
          throw err;
        }
      }),
    };
  }

  private get swapRename(): boolean {
    return versionAtLeast(this.version, '1.18.0');
  }

  private swapIndexes(req: ApiRequest): unknown {
    const body = jsonBody(req);
    if (!Array.isArray(body)) throw badRequest('bad_request', `Invalid value type: expected an array, but found ${describeJson(body)}`);
    const seen = new Set<string>();
    const swaps: IndexSwapSpec[] = body.map((item: unknown, i) => {
      if (!isPlainObject(item)) throw badRequest('bad_request', `Invalid value type at \`[${i}]\`: expected an object, but found ${describeJson(item)}`);
      // `rename` exists from 1.18 on; older engines deserialize the payload with
      // deny_unknown_fields (routes/swap_indexes.rs, SwapIndexesPayload) and answer 400.
      const fields = this.swapRename ? ['indexes', 'rename'] : ['indexes'];
      for (const key of Object.keys(item)) if (!fields.includes(key)) throw unknownField(`[${i}]`, key, fields);
      const indexes = item['indexes'];
      if (indexes === undefined) throw badRequest('missing_swap_indexes', `Missing field \`indexes\` inside \`[${i}]\``);
      if (!Array.isArray(indexes)) throw invalidType('invalid_swap_indexes', `[${i}].indexes`, 'an array', indexes);
      for (const uid of indexes) if (!isValidIndexUid(uid)) throw badRequest('invalid_index_uid', invalidIndexUidMessage(uid));
      if (indexes.length !== 2) {
        throw badRequest('invalid_swap_indexes', `Two indexes must be given for each swap. The list \`${JSON.stringify(indexes)}\` contains ${indexes.length} indexes.`);
      }
      const rename = item['rename'];
      if (rename !== undefined && typeof rename !== 'boolean') throw invalidType('invalid_swap_rename', `[${i}].rename`, 'a boolean', rename);
      for (const uid of indexes as string[]) {
        if (seen.has(uid)) throw badRequest('invalid_swap_duplicate_index_found', `Indexes must be declared only once during a swap. \`${uid}\` was specified several times.`);
        seen.add(uid);
      }
      return { indexes: [indexes[0], indexes[1]] as [string, string], rename: rename === true };
    });
    return this.engine.enqueue({
      type: 'indexSwap',
      indexUid: null,
      op: { kind: 'indexSwap', swaps },
      // Engines with `rename` always echo it, defaulting to false; older ones do not know it.
      details: { swaps: swaps.map((s) => (this.swapRename ? { indexes: [...s.indexes], rename: s.rename } : { indexes: [...s.indexes] })) },
    });
  }

  private listTasks(req: ApiRequest): unknown {
    const q = parseTaskQuery(req.query, false);
    let tasks = this.engine.filterTasks(q.filter);
    if (q.reverse) tasks.reverse();
    const total = tasks.length;
    if (q.from !== null) tasks = tasks.filter((t) => (q.reverse ? t.uid >= (q.from as number) : t.uid <= (q.from as number)));
    const page = tasks.slice(0, q.limit);
    const next = tasks[q.limit];
    return { results: page.map(taskView), total, limit: q.limit, from: page[0]?.uid ?? null, next: next?.uid ?? null };
  }

  private deleteOrCancelTasks(req: ApiRequest, type: 'taskDeletion' | 'taskCancelation'): unknown {
    const q = parseTaskQuery(req.query, true);
    const verb = type === 'taskDeletion' ? 'delete' : 'cancel';
    if (!q.hasFilter) {
      throw badRequest(
        'missing_task_filters',
        `Query parameters to filter the tasks to ${verb} are missing. Available query parameters are: \`uids\`, \`indexUids\`, \`statuses\`, \`types\`, \`canceledBy\`, \`beforeEnqueuedAt\`, \`afterEnqueuedAt\`, \`beforeStartedAt\`, \`afterStartedAt\`, \`beforeFinishedAt\`, \`afterFinishedAt\`.`,
      );
    }
    // The engine resolves the filter when the request arrives; later tasks are not affected.
    const matched = this.engine.filterTasks(q.filter).map((t) => t.uid);
    const counter = type === 'taskDeletion' ? 'deletedTasks' : 'canceledTasks';
    return this.engine.enqueue({
      type,
      indexUid: null,
      op: { kind: type, matched },
      details: { matchedTasks: matched.length, [counter]: null, originalFilter: `?${req.rawQuery}` },
    });
  }
}
