import { describe } from 'vitest';
import { meiliEngineSetup } from '../../support/meili-fixture.js';
import { searchContract } from './engine-contract.js';

/*
 * The search contract against a real Meilisearch, which cannot be installed where the rest of
 * the suite runs. Indexes are created under a random `test_contract_*` prefix and deleted
 * afterwards, so a shared server is safe to use.
 */
const host = process.env.MEILI_HOST?.trim() || undefined;
const apiKey = process.env.MEILI_API_KEY || undefined;
// Optional: check the keys the processes will really use (see docs/search.md, Meilisearch).
const searchKey = process.env.MEILI_SEARCH_KEY || undefined;
const adminKey = process.env.MEILI_ADMIN_KEY || undefined;

if (!host) {
  console.warn(
    'Skipping the search contract against a real Meilisearch: MEILI_HOST is not set. ' +
      'Run it with: MEILI_HOST=http://127.0.0.1:7700 MEILI_API_KEY=... npm run test:meilisearch',
  );
}

// Skipped without MEILI_HOST: no Meilisearch can be installed on the CI machines (see above).
describe.skipIf(!host)('real Meilisearch (MEILI_HOST)', () => {
  searchContract(`meilisearch (real server at ${host ?? 'MEILI_HOST'})`, () => meiliEngineSetup({ host: host!, apiKey, searchKey, adminKey }, { label: 'contract' }));
});
