import type { DeliveryLedger, DeliveryRecord } from '../../functions/ports/delivery-ledger.js';

/** An in-process DeliveryLedger with DynamoDB's claim semantics, for benchmarks. */
export class MemoryLedger implements DeliveryLedger {
  readonly records = new Map<string, DeliveryRecord>();

  async claim(record: DeliveryRecord, nowSeconds: number): Promise<'claimed' | 'duplicate'> {
    const existing = this.records.get(record.deliveryId);
    if (existing && existing.expiresAt >= nowSeconds) return 'duplicate';
    this.records.set(record.deliveryId, record);
    return 'claimed';
  }

  async isClaimed(deliveryId: string, nowSeconds: number): Promise<boolean> {
    const record = this.records.get(deliveryId);
    return record !== undefined && record.expiresAt >= nowSeconds;
  }

  async release(deliveryId: string): Promise<void> {
    this.records.delete(deliveryId);
  }
}
