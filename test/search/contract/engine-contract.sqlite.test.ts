import { SqliteFtsEngine } from '../../../src/search/sqlite/sqlite-fts.js';
import { startApi } from '../../support/api.js';
import { searchContract } from './engine-contract.js';

searchContract('sqlite (embedded FTS5)', () => ({
  startApi: (dbPath, clock) => startApi({ databasePath: dbPath, clock, engine: new SqliteFtsEngine() }),
  // The embedded index is written in the snapshot's own transactions: nothing to do.
  index: async () => {},
  cleanup: async () => {},
}));
