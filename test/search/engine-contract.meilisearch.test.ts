import { startFakeMeilisearch } from '../support/fake-meilisearch.js';
import { meiliEngineSetup } from '../support/meili-fixture.js';
import { searchContract } from './engine-contract.js';

const MASTER_KEY = 'contract-master-key';

searchContract('meilisearch (fake server)', async () => {
  const fake = await startFakeMeilisearch({ masterKey: MASTER_KEY, taskDelayMs: 1 });
  return meiliEngineSetup({ host: fake.url, apiKey: MASTER_KEY }, { label: 'contract', after: () => fake.close() });
});
