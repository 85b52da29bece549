import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { createTableInput } from '../../functions/adapters/store/table-schema.js';

export interface EmbeddedDynamo {
  endpoint: string;
  /** Client settings for the embedded server (no AWS credentials needed). */
  clientConfig: DynamoDBClientConfig;
  tableName: string;
  close(): Promise<void>;
}

/** An in-memory DynamoDB (dynalite) on loopback with runner-medic's table, for local runs and tests. */
export async function startEmbeddedDynamo(tableName = 'runner-medic'): Promise<EmbeddedDynamo> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const clientConfig: DynamoDBClientConfig = {
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  };
  const client = new DynamoDBClient(clientConfig);
  await client.send(new CreateTableCommand(createTableInput(tableName)));
  client.destroy();
  return {
    endpoint,
    clientConfig,
    tableName,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections?.();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
