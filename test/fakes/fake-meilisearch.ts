/**
 * A protocol-faithful fake Meilisearch (v1.x HTTP API) for tests: drive it with the real
 * `meilisearch` client. See fake-meilisearch/server.ts for the switches and introspection.
 */
export { startFakeMeilisearch } from './meilisearch/server.js';
export type {
  FailRequestsOptions,
  FailTaskOptions,
  FakeMeilisearch,
  FakeMeilisearchOptions,
  FakeTask,
  RequestLogEntry,
} from './meilisearch/server.js';
export type { FakeApiKey } from './meilisearch/auth.js';
export type { IndexSettings } from './meilisearch/settings.js';
export type { MeiliErrorBody } from './meilisearch/errors.js';
