import { startFakeMeilisearch } from '../../fakes/fake-meilisearch.js';
import { meiliEngineSetup } from '../../support/meili-fixture.js';
import { searchContract } from './engine-contract.js';

const MASTER_KEY = 'contract-master-key';
const SEARCH_KEY = 'contract-search-key';
const ADMIN_KEY = 'contract-admin-key';

// With the keys an operator gives each process: the API's may only search the test indexes.
searchContract('meilisearch (fake server)', async () => {
  const fake = await startFakeMeilisearch({
    masterKey: MASTER_KEY,
    taskDelayMs: 1,
    apiKeys: [
      { key: SEARCH_KEY, actions: ['search'], indexes: ['test_contract_*'] },
      { key: ADMIN_KEY, actions: ['*'], indexes: ['*'] },
    ],
  });
  return meiliEngineSetup(
    { host: fake.url, apiKey: MASTER_KEY, searchKey: SEARCH_KEY, adminKey: ADMIN_KEY },
    { label: 'contract', after: () => fake.close() },
  );
});
