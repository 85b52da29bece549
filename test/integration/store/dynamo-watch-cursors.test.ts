import { DynamoWatchCursors } from '../../../functions/adapters/store/dynamo-watch-cursors.js';
import { createDocumentClient } from '../../../functions/config/compose-clients.js';
import { startEmbeddedDynamo } from '../../../sandbox/local/embedded-dynamo.js';
import { describeWatchCursorsContract } from './contract/watch-cursors-contract.js';

describeWatchCursorsContract('DynamoWatchCursors on dynalite', async () => {
  const dynamo = await startEmbeddedDynamo('runner-medic-watch-cursors');
  const client = createDocumentClient(dynamo.clientConfig);
  return {
    cursors: new DynamoWatchCursors(client, dynamo.tableName),
    close: async () => {
      client.destroy();
      await dynamo.close();
    },
  };
});
