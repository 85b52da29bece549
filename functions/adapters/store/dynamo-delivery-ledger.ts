import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { GithubObservation } from '../../domain/model/observation.js';
import type {
  ClaimOutcome,
  DeliveryLedger,
  DeliveryRecord,
  PendingDelivery,
} from '../../ports/delivery-ledger.js';
import { StoreError } from '../../ports/delivery-ledger.js';
import { deliveryKey } from './table-schema.js';

/**
 * Every delivery not yet published has a marker in this one partition, so the sweep finds them
 * with one Query instead of a Scan. A marker lives from receipt to publication (seconds), so the
 * partition stays small; at GitHub's webhook rates it is far below a partition's write limit.
 */
const PENDING_PARTITION = 'DELIVERY-PENDING';
const pendingKey = (deliveryId: string) => ({ pk: PENDING_PARTITION, sk: deliveryId });
const bodyKey = (digest: string) => ({ pk: `DELIVERY-BODY#${digest}`, sk: 'DELIVERY-BODY' });

/**
 * Delivery dedupe on DynamoDB without transactions (dynalite has none). Write order makes every
 * crash recoverable: the pending marker first, then the body claim, then the delivery claim, and
 * after publication the `published` flag and the marker's removal. A crash anywhere leaves a
 * marker the sweep can finish from.
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
      await this.putPendingMarker(record, nowSeconds);
      const bodyHolder = await this.claimBody(record, nowSeconds);
      if (bodyHolder !== deliveryId) {
        await this.deletePendingMarker(deliveryId);
        return { status: 'duplicate', reason: 'same-body', original: bodyHolder };
      }
      if (await this.claimDelivery(record, nowSeconds, leaseSeconds)) return { status: 'claimed' };
      const existing = await this.read(deliveryId);
      if (existing?.published === true) {
        await this.deletePendingMarker(deliveryId);
        return { status: 'duplicate', reason: 'published' };
      }
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
          UpdateExpression: 'SET published = :true, publishedAt = :now',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':true': true, ':now': nowSeconds },
        }),
      );
      await this.deletePendingMarker(deliveryId);
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
            KeyConditionExpression: 'pk = :pk',
            FilterExpression: 'receivedAt <= :before',
            ExpressionAttributeValues: { ':pk': PENDING_PARTITION, ':before': receivedBefore },
            ConsistentRead: true,
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

  private async putPendingMarker(record: DeliveryRecord, nowSeconds: number): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: pendingKey(record.deliveryId),
        UpdateExpression:
          'SET #event = :event, observation = :observation, bodyDigest = :digest, ' +
          'expiresAt = :expiresAt, receivedAt = if_not_exists(receivedAt, :now)',
        ExpressionAttributeNames: { '#event': 'event' },
        ExpressionAttributeValues: {
          ':event': record.event,
          ':observation': record.observation,
          ':digest': record.bodyDigest,
          ':expiresAt': record.expiresAt,
          ':now': nowSeconds,
        },
      }),
    );
  }

  private async deletePendingMarker(deliveryId: string): Promise<void> {
    await this.client.send(
      new DeleteCommand({ TableName: this.tableName, Key: pendingKey(deliveryId) }),
    );
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
  const { sk, event, observation, bodyDigest, expiresAt, receivedAt } = item;
  if (
    typeof sk !== 'string' ||
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
    deliveryId: sk,
    event,
    observation: observation as GithubObservation,
    bodyDigest,
    expiresAt,
    receivedAt,
  };
}
