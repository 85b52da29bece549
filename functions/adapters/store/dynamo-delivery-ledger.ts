import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { GithubObservation } from '../../domain/model/observation.js';
import type {
  ClaimOutcome,
  DeliveryLedger,
  DeliveryRecord,
  DeliveryRef,
  PendingDelivery,
} from '../../ports/delivery-ledger.js';
import { StoreError } from '../../ports/delivery-ledger.js';
import { deliveryIdOf, deliveryKey } from './table-schema.js';

/**
 * A delivery not yet published carries `pend = DELIVERY-PENDING` (the sparse `byPending` index,
 * table-schema.ts), so the sweep finds every pending delivery with one Query instead of a Scan;
 * publication removes it in the same write that sets `published`. An item is in the index from
 * receipt to publication (seconds), so the index partition stays small.
 */
const PENDING = 'DELIVERY-PENDING';

/**
 * One item a delivery, keyed by its body's digest: the same signed body under any delivery id
 * is one claim. `rn` (the sparse `byRunnerName` index, its keys prefixed) finds it by delivery
 * id, for the sweep's look at GitHub's deliveries.
 */
const claimKey = (digest: string) => ({ pk: `DELIVERY-BODY#${digest}`, sk: 'DELIVERY' });
const byIdKey = (deliveryId: string) => `DELIVERY#${deliveryId}`;

/**
 * Delivery dedupe on DynamoDB without transactions (dynalite has none): two writes a delivery.
 * The claim is the intent (pending, with its observation), in the store before anything is
 * published, and it holds the body, so a replay under another id finds it; after publication
 * one write sets `published` and takes it out of the pending index. A crash after the claim
 * leaves it pending, and the sweep publishes it.
 *
 * Until 2026-12 a delivery was two items (`DELIVERY#<id>` and a body claim). A delivery the older
 * webhook left pending is moved to the new item when the sweep lists it.
 */
export class DynamoDeliveryLedger implements DeliveryLedger {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async claim(
    record: DeliveryRecord,
    nowSeconds: number,
    leaseSeconds: number,
  ): Promise<ClaimOutcome> {
    const { deliveryId } = record;
    try {
      if (await this.putClaim(record, nowSeconds, nowSeconds)) return { status: 'claimed' };
      const existing = await this.read(record);
      const holder = existing?.deliveryId;
      if (holder !== deliveryId)
        return {
          status: 'duplicate',
          reason: 'same-body',
          original: typeof holder === 'string' ? holder : 'unknown',
        };
      if (existing?.published === true) return { status: 'duplicate', reason: 'published' };
      if (await this.takeOver(record, nowSeconds, leaseSeconds)) return { status: 'claimed' };
      return { status: 'duplicate', reason: 'in-flight' };
    } catch (error) {
      throw new StoreError(`could not claim delivery ${deliveryId}`, { cause: error });
    }
  }

  async markPublished(delivery: DeliveryRef, nowSeconds: number): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: claimKey(delivery.bodyDigest),
          UpdateExpression: 'SET published = :true, publishedAt = :now REMOVE pend',
          ConditionExpression: 'deliveryId = :id',
          ExpressionAttributeValues: {
            ':true': true,
            ':now': nowSeconds,
            ':id': delivery.deliveryId,
          },
        }),
      );
    } catch (error) {
      throw new StoreError(`could not mark delivery ${delivery.deliveryId} published`, {
        cause: error,
      });
    }
  }

  async release(delivery: DeliveryRef): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: claimKey(delivery.bodyDigest),
          UpdateExpression: 'SET claimedAt = :zero',
          ConditionExpression: 'deliveryId = :id AND published = :false',
          ExpressionAttributeValues: { ':zero': 0, ':false': false, ':id': delivery.deliveryId },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return;
      throw new StoreError(`could not release delivery ${delivery.deliveryId}`, { cause: error });
    }
  }

  async isClaimed(deliveryId: string, nowSeconds: number): Promise<boolean> {
    try {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: 'byRunnerName',
          KeyConditionExpression: 'rn = :id',
          ExpressionAttributeValues: { ':id': byIdKey(deliveryId) },
        }),
      );
      if ((page.Items ?? []).some((i) => Number(i.expiresAt) >= nowSeconds)) return true;
      // A delivery the webhook claimed before deliveries became one item.
      const legacy = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: deliveryKey(deliveryId) }),
      );
      return Number(legacy.Item?.expiresAt ?? 0) >= nowSeconds;
    } catch (error) {
      throw new StoreError(`could not read delivery ${deliveryId}`, { cause: error });
    }
  }

  async listUnpublished(receivedBefore: number, limit: number): Promise<PendingDelivery[]> {
    const found: PendingDelivery[] = [];
    let startKey: Record<string, unknown> | undefined;
    try {
      do {
        const page = await this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            // An index is read eventually consistent: an item published a moment ago may still
            // be listed, and its claim (a consistent conditional write) then finds it published.
            IndexName: 'byPending',
            KeyConditionExpression: 'pend = :pend',
            FilterExpression: 'receivedAt <= :before AND published = :false',
            ExpressionAttributeValues: {
              ':pend': PENDING,
              ':before': receivedBefore,
              ':false': false,
            },
            ExclusiveStartKey: startKey,
          }),
        );
        for (const item of page.Items ?? []) {
          const pending = pendingFromItem(item);
          if (!pending) continue;
          if (deliveryIdOf(String(item.pk)) !== null) await this.moveLegacy(pending);
          found.push(pending);
          if (found.length >= limit) return found;
        }
        startKey = page.LastEvaluatedKey;
      } while (startKey);
      return found;
    } catch (error) {
      throw new StoreError('could not list unpublished deliveries', { cause: error });
    }
  }

  /** Writes a new claim, or one over an expired item; false when a live one holds the body. */
  private async putClaim(
    record: DeliveryRecord,
    nowSeconds: number,
    receivedAt: number,
  ): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...claimKey(record.bodyDigest),
            type: 'delivery',
            deliveryId: record.deliveryId,
            rn: byIdKey(record.deliveryId),
            event: record.event,
            kind: record.observation.kind,
            observation: record.observation,
            bodyDigest: record.bodyDigest,
            published: false,
            pend: PENDING,
            receivedAt,
            claimedAt: nowSeconds,
            expiresAt: record.expiresAt,
          },
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now',
          ExpressionAttributeValues: { ':now': nowSeconds },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /** Takes over this delivery's unpublished claim whose lease ran out. */
  private async takeOver(
    record: DeliveryRecord,
    nowSeconds: number,
    leaseSeconds: number,
  ): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: claimKey(record.bodyDigest),
          UpdateExpression: 'SET claimedAt = :now',
          ConditionExpression:
            'deliveryId = :id AND published = :false AND claimedAt <= :leaseEnded AND expiresAt >= :now',
          ExpressionAttributeValues: {
            ':id': record.deliveryId,
            ':false': false,
            ':now': nowSeconds,
            ':leaseEnded': nowSeconds - leaseSeconds,
          },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /**
   * Moves a delivery the older webhook left pending (`DELIVERY#<id>`) to its one item: the new
   * claim first, released so it can be taken at once, then the old item leaves the pending index.
   * A crash between the two repeats both, harmlessly.
   */
  private async moveLegacy(pending: PendingDelivery): Promise<void> {
    await this.putClaim(pending, 0, pending.receivedAt);
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: deliveryKey(pending.deliveryId),
        UpdateExpression: 'REMOVE pend',
      }),
    );
  }

  private async read(record: DeliveryRef): Promise<Record<string, unknown> | undefined> {
    const result = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: claimKey(record.bodyDigest),
        ConsistentRead: true,
      }),
    );
    return result.Item;
  }
}

function pendingFromItem(item: Record<string, unknown>): PendingDelivery | undefined {
  const { event, observation, bodyDigest, expiresAt, receivedAt } = item;
  const deliveryId =
    typeof item.deliveryId === 'string' ? item.deliveryId : deliveryIdOf(String(item.pk));
  if (
    deliveryId === null ||
    typeof event !== 'string' ||
    typeof observation !== 'object' ||
    observation === null ||
    typeof bodyDigest !== 'string' ||
    typeof expiresAt !== 'number' ||
    typeof receivedAt !== 'number'
  ) {
    return undefined;
  }
  return {
    deliveryId,
    event,
    observation: observation as GithubObservation,
    bodyDigest,
    expiresAt,
    receivedAt,
  };
}
