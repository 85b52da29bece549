import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { GithubObservation } from '../../domain/model/observation.js';
import type {
  ClaimOutcome,
  DeliveryLedger,
  DeliveryRecord,
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
const bodyKey = (digest: string) => ({ pk: `DELIVERY-BODY#${digest}`, sk: 'DELIVERY-BODY' });

/**
 * Delivery dedupe on DynamoDB without transactions (dynalite has none): three writes a delivery.
 * The body claim, then the delivery claim, which is the intent (pending, with its observation)
 * and is in the store before anything is published; after publication one write sets
 * `published` and takes it out of the pending index. A crash after the body claim leaves
 * nothing pending: the delivery failed at GitHub, the sweep finds it unclaimed and asks GitHub
 * for it again (the body claim lets the same id through). A crash after the delivery claim
 * leaves it pending, and the sweep publishes it.
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
      const bodyHolder = await this.claimBody(record, nowSeconds);
      if (bodyHolder !== deliveryId)
        return { status: 'duplicate', reason: 'same-body', original: bodyHolder };
      if (await this.claimDelivery(record, nowSeconds, leaseSeconds)) return { status: 'claimed' };
      const existing = await this.read(deliveryId);
      if (existing?.published === true) return { status: 'duplicate', reason: 'published' };
      return { status: 'duplicate', reason: 'in-flight' };
    } catch (error) {
      throw new StoreError(`could not claim delivery ${deliveryId}`, { cause: error });
    }
  }

  async markPublished(deliveryId: string, nowSeconds: number): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: deliveryKey(deliveryId),
          UpdateExpression: 'SET published = :true, publishedAt = :now REMOVE pend',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':true': true, ':now': nowSeconds },
        }),
      );
    } catch (error) {
      throw new StoreError(`could not mark delivery ${deliveryId} published`, { cause: error });
    }
  }

  async release(deliveryId: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: deliveryKey(deliveryId),
          UpdateExpression: 'SET claimedAt = :zero',
          ConditionExpression: 'attribute_exists(pk) AND published = :false',
          ExpressionAttributeValues: { ':zero': 0, ':false': false },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return;
      throw new StoreError(`could not release delivery ${deliveryId}`, { cause: error });
    }
  }

  async isClaimed(deliveryId: string, nowSeconds: number): Promise<boolean> {
    try {
      const item = await this.read(deliveryId);
      const expiresAt = item?.expiresAt;
      return typeof expiresAt === 'number' && expiresAt >= nowSeconds;
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
          if (pending) found.push(pending);
          if (found.length >= limit) return found;
        }
        startKey = page.LastEvaluatedKey;
      } while (startKey);
      return found;
    } catch (error) {
      throw new StoreError('could not list unpublished deliveries', { cause: error });
    }
  }

  /** Claims the body digest for this delivery id; returns the delivery id that holds it. */
  private async claimBody(record: DeliveryRecord, nowSeconds: number): Promise<string> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...bodyKey(record.bodyDigest),
            type: 'delivery-body',
            deliveryId: record.deliveryId,
            expiresAt: record.expiresAt,
          },
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now OR deliveryId = :id',
          ExpressionAttributeValues: { ':now': nowSeconds, ':id': record.deliveryId },
        }),
      );
      return record.deliveryId;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const holder = await this.client.send(
        new GetCommand({
          TableName: this.tableName,
          Key: bodyKey(record.bodyDigest),
          ConsistentRead: true,
        }),
      );
      const id: unknown = holder.Item?.deliveryId;
      return typeof id === 'string' ? id : 'unknown';
    }
  }

  /** A new claim, or the take-over of an unpublished one whose lease ran out. */
  private async claimDelivery(
    record: DeliveryRecord,
    nowSeconds: number,
    leaseSeconds: number,
  ): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            ...deliveryKey(record.deliveryId),
            type: 'delivery',
            event: record.event,
            kind: record.observation.kind,
            observation: record.observation,
            bodyDigest: record.bodyDigest,
            published: false,
            pend: PENDING,
            receivedAt: nowSeconds,
            claimedAt: nowSeconds,
            expiresAt: record.expiresAt,
          },
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now',
          ExpressionAttributeValues: { ':now': nowSeconds },
        }),
      );
      return true;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: deliveryKey(record.deliveryId),
          UpdateExpression: 'SET claimedAt = :now',
          ConditionExpression:
            'published = :false AND claimedAt <= :leaseEnded AND expiresAt >= :now',
          ExpressionAttributeValues: {
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

  private async read(deliveryId: string): Promise<Record<string, unknown> | undefined> {
    const result = await this.client.send(
      new GetCommand({
        TableName: this.tableName,
        Key: deliveryKey(deliveryId),
        ConsistentRead: true,
      }),
    );
    return result.Item;
  }
}

function pendingFromItem(item: Record<string, unknown>): PendingDelivery | undefined {
  const { event, observation, bodyDigest, expiresAt, receivedAt } = item;
  const deliveryId = deliveryIdOf(String(item.pk));
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
