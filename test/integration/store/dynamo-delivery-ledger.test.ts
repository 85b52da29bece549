import { DynamoDeliveryLedger } from '../../../functions/adapters/store/dynamo-delivery-ledger.js';
import { createDocumentClient } from '../../../functions/config/compose-clients.js';
import { startEmbeddedDynamo } from '../../../functions/local/embedded-dynamo.js';
import { describeDeliveryLedgerContract } from './contract/delivery-ledger-contract.js';

describeDeliveryLedgerContract('DynamoDeliveryLedger on dynalite', async () => {
  const dynamo = await startEmbeddedDynamo('runner-medic-ledger');
  const client = createDocumentClient(dynamo.clientConfig);
  return {
    ledger: new DynamoDeliveryLedger(client, dynamo.tableName),
    close: async () => {
      client.destroy();
      await dynamo.close();
    },
  };
});
