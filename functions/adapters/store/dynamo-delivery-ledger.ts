import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DeliveryLedger, DeliveryRecord } from '../../ports/delivery-ledger.js';
import { StoreError } from '../../ports/delivery-ledger.js';
import { deliveryKey } from './table-schema.js';

/** Delivery dedupe on DynamoDB: one conditional PutItem per delivery, no transactions. */
export class DynamoDeliveryLedger implements DeliveryLedger {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async claim(record: DeliveryRecord, nowSeconds: number): Promise<'claimed' | 'duplicate'> {
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
            expiresAt: record.expiresAt,
          },
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt < :now',
          ExpressionAttributeValues: { ':now': nowSeconds },
        }),
      );
      return 'claimed';
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return 'duplicate';
      throw new StoreError(`could not claim delivery ${record.deliveryId}`, { cause: error });
    }
  }

  async isClaimed(deliveryId: string, nowSeconds: number): Promise<boolean> {
    try {
      const result = await this.client.send(
        new GetCommand({
          TableName: this.tableName,
          Key: deliveryKey(deliveryId),
          ConsistentRead: true,
        }),
      );
      const expiresAt = result.Item?.expiresAt;
      return typeof expiresAt === 'number' && expiresAt >= nowSeconds;
    } catch (error) {
      throw new StoreError(`could not read delivery ${deliveryId}`, { cause: error });
    }
  }

  async release(deliveryId: string): Promise<void> {
    try {
      await this.client.send(
        new DeleteCommand({ TableName: this.tableName, Key: deliveryKey(deliveryId) }),
      );
    } catch (error) {
      throw new StoreError(`could not release delivery ${deliveryId}`, { cause: error });
    }
  }
}
