import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { WatchCursor, WatchCursors } from '../../ports/watch-cursors.js';

/**
 * One item per cluster in the facts table. Its size is two resourceVersions per runner
 * namespace (tens of bytes each): 1,000 namespaces fit well inside DynamoDB's 400 KB item.
 */
const PARTITION = 'WATCH-CURSOR';
/** A cursor not written for this long is of no use (etcd compacted past it long ago). */
const KEEP_SECONDS = 24 * 3600;

const seconds = (ms: number) => Math.floor(ms / 1000);

export class DynamoWatchCursors implements WatchCursors {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async read(cluster: string, now: number): Promise<WatchCursor | null> {
    const { Item: item } = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: PARTITION, sk: `CLUSTER#${cluster}` },
        ConsistentRead: true,
      }),
    );
    if (!item) return null;
    if (typeof item['expiresAt'] === 'number' && item['expiresAt'] < seconds(now)) return null;
    const scopes = item['scopes'];
    const listedAt = item['listedAt'];
    const pending = item['pending'];
    if (typeof scopes !== 'object' || scopes === null || typeof listedAt !== 'number') return null;
    return {
      scopes: scopes as WatchCursor['scopes'],
      listedAt,
      pending: Array.isArray(pending) ? pending.filter((n) => typeof n === 'string') : [],
    };
  }

  async write(cluster: string, cursor: WatchCursor, now: number): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          pk: PARTITION,
          sk: `CLUSTER#${cluster}`,
          // Place-keeping, as the sweep cursor is: it changes with every sweep by design.
          type: 'cursor',
          scopes: cursor.scopes,
          listedAt: cursor.listedAt,
          pending: cursor.pending,
          expiresAt: seconds(now) + KEEP_SECONDS,
        },
      }),
    );
  }
}
