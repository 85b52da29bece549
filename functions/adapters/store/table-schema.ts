import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/**
 * The single DynamoDB table. Every item has `pk` and `sk`; `expiresAt` (epoch seconds) is the
 * TTL attribute, and code also checks it on read because DynamoDB deletes expired items lazily.
 * serverless.yml declares the same table for AWS; keep the two in step.
 */
export const TABLE_KEYS = { partition: 'pk', sort: 'sk', ttl: 'expiresAt' } as const;

export const deliveryKey = (deliveryId: string) => ({
  pk: `DELIVERY#${deliveryId}`,
  sk: 'DELIVERY',
});

export function createTableInput(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: TABLE_KEYS.partition, AttributeType: 'S' },
      { AttributeName: TABLE_KEYS.sort, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: TABLE_KEYS.partition, KeyType: 'HASH' },
      { AttributeName: TABLE_KEYS.sort, KeyType: 'RANGE' },
    ],
  };
}
