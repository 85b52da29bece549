import { describeDeliveryLedgerContract } from './contract/delivery-ledger-contract.js';
import { sqliteInTempFolder } from './contract/sqlite-temp.js';

describeDeliveryLedgerContract('SqliteDeliveryLedger on a file', async () => {
  const { stores, close } = sqliteInTempFolder('ledger');
  return { ledger: stores.ledger, close };
});
