import { DynamoFactsStore } from '../../../functions/adapters/store/dynamo-facts-store.js';
import { createDocumentClient } from '../../../functions/config/compose-clients.js';
import { startEmbeddedDynamo } from '../../../sandbox/local/embedded-dynamo.js';
import { describeFactsStoreContract } from './contract/facts-store-contract.js';

describeFactsStoreContract('DynamoFactsStore on dynalite', async () => {
  const dynamo = await startEmbeddedDynamo('runner-medic-facts');
  const client = createDocumentClient(dynamo.clientConfig);
  return {
    store: new DynamoFactsStore(client, dynamo.tableName),
    close: async () => {
      client.destroy();
      await dynamo.close();
    },
  };
});
