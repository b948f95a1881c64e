import { afterAll, beforeAll } from 'vitest';
import { addKey, startApi, testClock, type TestApi } from '../../support/api.js';
import { rawArticle, rawSection } from '../../support/cms-fixtures.js';
import { buildSnapshot, tempDir } from '../../support/snapshot-fixture.js';

/*
 * The smallest live API the contract suites need (the /docs page, the OpenAPI linter): one
 * section, one article, a key, the clock at a fixed instant. Shared so the suites cannot drift
 * apart in what "a working API" means.
 */

export const NOW = '2026-11-01T12:00:00Z';

export interface OneArticleApi {
  readonly api: TestApi;
  readonly key: string;
  readonly dir: ReturnType<typeof tempDir>;
}

/** Starts the API in `beforeAll` and stops it (and removes its files) in `afterAll`. */
export function useOneArticleApi(prefix: string): OneArticleApi {
  const dir = tempDir(prefix);
  const state: { api?: TestApi; key?: string } = {};
  beforeAll(async () => {
    const dbPath = dir.path('snapshot.db');
    buildSnapshot(dbPath, {
      sections: [rawSection({ slug: 'fiber', name: 'Fiber' })],
      articles: [rawArticle({ slug: 'one', title: 'Laser one', section_slug: 'fiber', published_at: '2026-10-30T08:00:00Z' })],
    });
    state.key = addKey(dbPath).key;
    state.api = await startApi({ databasePath: dbPath, clock: testClock(NOW) });
  });
  afterAll(async () => {
    await state.api?.close();
    dir.cleanup();
  });
  return {
    get api() {
      return state.api!;
    },
    get key() {
      return state.key!;
    },
    dir,
  };
}
