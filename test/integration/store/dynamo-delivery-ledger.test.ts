import type { Server } from 'node:http';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDeliveryLedger } from '../../../functions/adapters/store/dynamo-delivery-ledger.js';
import { deliveryKey } from '../../../functions/adapters/store/table-schema.js';
import type { GithubObservation } from '../../../functions/domain/model/observation.js';
import { republishUnpublishedDeliveries } from '../../../functions/ingress/republish-unpublished.js';
import type { EmbeddedDynamo } from '../../../sandbox/local/embedded-dynamo.js';
import type { DeliveryRecord } from '../../../functions/ports/delivery-ledger.js';
import { startCountingProxy } from '../../bench/store-proxy.js';
import { createDocumentClient } from '../../../functions/config/compose-clients.js';
import { startEmbeddedDynamo } from '../../../sandbox/local/embedded-dynamo.js';
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

describe('DynamoDeliveryLedger writes', () => {
  const observation = { kind: 'job.queued' } as unknown as GithubObservation;
  const record = (deliveryId: string): DeliveryRecord => ({
    deliveryId,
    event: 'workflow_job',
    observation,
    bodyDigest: `digest-${deliveryId}`,
    expiresAt: 9_000,
  });
  let dynamo: EmbeddedDynamo;
  let proxy: Server;
  let client: DynamoDBDocumentClient;
  let ledger: DynamoDeliveryLedger;
  let writes: string[] = [];
  beforeAll(async () => {
    dynamo = await startEmbeddedDynamo('runner-medic-ledger-writes');
    const counted = await startCountingProxy(dynamo.endpoint, ({ operation, status }) => {
      if (status < 300 && ['PutItem', 'UpdateItem', 'DeleteItem'].includes(operation))
        writes.push(operation);
    });
    proxy = counted.server;
    client = createDocumentClient({ ...dynamo.clientConfig, endpoint: counted.url });
    ledger = new DynamoDeliveryLedger(client, dynamo.tableName);
  });
  afterAll(async () => {
    client.destroy();
    await new Promise((resolve) => proxy.close(resolve));
    await dynamo.close();
  });

  it('stores a delivery with two writes: the claim, then its publication', async () => {
    writes = [];
    expect(await ledger.claim(record('w-1'), 1_000, 60)).toEqual({ status: 'claimed' });
    await ledger.markPublished(record('w-1'), 1_001);
    expect(writes).toEqual(['PutItem', 'UpdateItem']);
    expect(await ledger.isClaimed('w-1', 1_002)).toBe(true);
  });

  it('moves a delivery the older webhook left pending, and republishes it once', async () => {
    // Stored as the webhook wrote it until 2026-12: the delivery's own item, pending.
    const old = record('w-legacy');
    await client.send(
      new PutCommand({
        TableName: dynamo.tableName,
        Item: {
          ...deliveryKey(old.deliveryId),
          type: 'delivery',
          event: old.event,
          kind: observation.kind,
          observation,
          bodyDigest: old.bodyDigest,
          published: false,
          pend: 'DELIVERY-PENDING',
          receivedAt: 900,
          claimedAt: 900,
          expiresAt: old.expiresAt,
        },
      }),
    );
    const published: unknown[] = [];
    const bus = {
      publish: async (events: readonly unknown[]) => {
        published.push(...events);
      },
    };
    const first = await republishUnpublishedDeliveries(ledger, bus, 1_000_000);
    expect(first.published).toEqual(['w-legacy']);
    expect(published).toHaveLength(1);
    // Out of the pending index for good: the next sweep finds nothing.
    const second = await republishUnpublishedDeliveries(ledger, bus, 1_100_000);
    expect(second).toEqual({ published: [], settled: [], failed: [] });
    expect(await ledger.isClaimed('w-legacy', 1_100)).toBe(true);
  });
});
