import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/**
 * The single DynamoDB table. Every item has `pk` and `sk`; `expiresAt` (epoch seconds) is the
 * TTL attribute, and code also checks it on read because DynamoDB deletes expired items lazily.
 * serverless.yml declares the same table for AWS; keep the two in step.
 */
const TABLE_KEYS = { partition: 'pk', sort: 'sk', ttl: 'expiresAt' } as const;

const DELIVERY_PK = 'DELIVERY#';
export const deliveryKey = (deliveryId: string) => ({
  pk: `${DELIVERY_PK}${deliveryId}`,
  sk: 'DELIVERY',
});
/** The delivery id of a delivery item's `pk`; null for any other item. */
export const deliveryIdOf = (pk: string): string | null =>
  pk.startsWith(DELIVERY_PK) ? pk.slice(DELIVERY_PK.length) : null;

/**
 * The global secondary indexes the engine's joins use (all project every attribute; all sparse:
 * an item is in an index only when it carries that index's key):
 * - `byRunnerName` (`rn`, `sk`): a job by the runner it ran on; a runner's losses, warnings, cached
 *   job fields, registration and the actions on it.
 * - `byRun` (`run`, `sk`): a run's jobs, its run records and its re-run / cancel intents.
 * - `byGroup` (`grp`, `sk`): an owner's queued jobs (`QUEUED#…`), an owner's registrations
 *   (`REGS#…`), the owners with jobs (`OWNERS`).
 * - `byPending` (`pend`, `sk`): claims without a result (`CLAIM`), audit events not yet
 *   published (`OUTBOX`) and webhook deliveries claimed but not yet published (`DELIVERY-PENDING`).
 */
const TABLE_INDEXES = {
  byRunnerName: 'rn',
  byRun: 'run',
  byGroup: 'grp',
  byPending: 'pend',
} as const;

export function createTableInput(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: TABLE_KEYS.partition, AttributeType: 'S' },
      { AttributeName: TABLE_KEYS.sort, AttributeType: 'S' },
      ...Object.values(TABLE_INDEXES).map((a) => ({
        AttributeName: a,
        AttributeType: 'S' as const,
      })),
    ],
    KeySchema: [
      { AttributeName: TABLE_KEYS.partition, KeyType: 'HASH' },
      { AttributeName: TABLE_KEYS.sort, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: Object.entries(TABLE_INDEXES).map(([name, attribute]) => ({
      IndexName: name,
      KeySchema: [
        { AttributeName: attribute, KeyType: 'HASH' as const },
        { AttributeName: TABLE_KEYS.sort, KeyType: 'RANGE' as const },
      ],
      Projection: { ProjectionType: 'ALL' as const },
    })),
  };
}
