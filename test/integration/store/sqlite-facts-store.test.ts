import { describeFactsStoreContract } from './contract/facts-store-contract.js';
import { sqliteInTempFolder } from './contract/sqlite-temp.js';

describeFactsStoreContract('SqliteFactsStore on a file', async () => {
  const { stores, close } = sqliteInTempFolder('facts');
  return { store: stores.facts, close };
});
