import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ClusterSighting, ClusterSightings } from '../../ports/cluster-sightings.js';

/**
 * One item per cluster name in one partition of the facts table, so the doctor lists them with
 * one Query. Cluster names are few (the configured ones, and the odd stray exporter).
 */
const PARTITION = 'CLUSTER-SIGHTINGS';
/** A name not heard from for this long is forgotten (DynamoDB TTL). */
const KEEP_SECONDS = 30 * 24 * 3600;
/**
 * An exporter sends many events a minute; the item is rewritten at most once per this window,
 * so the write rate stays one per cluster per minute whatever the event rate.
 */
const SIGHTING_RESOLUTION_MS = 60_000;

const seconds = (ms: number) => Math.floor(ms / 1000);

export class DynamoClusterSightings implements ClusterSightings {
  /** What this container last wrote per name: skips writes inside the resolution window. */
  private readonly written = new Map<string, { at: number; configured: boolean }>();

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async noteEvent(cluster: string, configured: boolean, at: number, now: number): Promise<void> {
    const last = this.written.get(cluster);
    if (last && last.configured === configured && at < last.at + SIGHTING_RESOLUTION_MS) return;
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: PARTITION, sk: `CLUSTER#${cluster}` },
          UpdateExpression:
            'SET #cluster = :cluster, configured = :configured, lastEventAt = :at, expiresAt = :exp',
          // Only forward in time: a late or replayed batch never makes a cluster look older.
          ConditionExpression: 'attribute_not_exists(lastEventAt) OR lastEventAt < :at',
          ExpressionAttributeNames: { '#cluster': 'cluster' },
          ExpressionAttributeValues: {
            ':cluster': cluster,
            ':configured': configured,
            ':at': at,
            ':exp': seconds(now) + KEEP_SECONDS,
          },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
    this.written.set(cluster, { at, configured });
  }

  async sightings(now: number): Promise<ClusterSighting[]> {
    const out: ClusterSighting[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': PARTITION },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of page.Items ?? []) {
        if (typeof item['expiresAt'] === 'number' && item['expiresAt'] < seconds(now)) continue;
        if (typeof item['cluster'] !== 'string' || typeof item['lastEventAt'] !== 'number')
          continue;
        out.push({
          cluster: item['cluster'],
          configured: item['configured'] === true,
          lastEventAt: item['lastEventAt'],
        });
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return out.sort((a, b) => b.lastEventAt - a.lastEventAt);
  }
}
