import { describeBreakerBurstContract } from './contract/breaker-burst-contract.js';
import { sqliteInTempFolder } from './contract/sqlite-temp.js';

describeBreakerBurstContract('SqliteFactsStore on a file', async () => {
  const { stores, close } = sqliteInTempFolder('breaker-burst');
  return { store: stores.facts, close };
});
