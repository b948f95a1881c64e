/**
 * A protocol-faithful fake Meilisearch (v1.x HTTP API) for tests: drive it with the real
 * `meilisearch` client. See fake-meilisearch/server.ts for the switches and introspection.
 */
export { startFakeMeilisearch } from './fake-meilisearch/server.js';
export type {
  FailRequestsOptions,
  FailTaskOptions,
  FakeMeilisearch,
  FakeMeilisearchOptions,
  FakeTask,
  RequestLogEntry,
} from './fake-meilisearch/server.js';
export type { FakeApiKey } from './fake-meilisearch/auth.js';
export type { IndexSettings } from './fake-meilisearch/settings.js';
export type { MeiliErrorBody } from './fake-meilisearch/errors.js';
