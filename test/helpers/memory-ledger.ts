import type {
  ClaimOutcome,
  DeliveryLedger,
  DeliveryRecord,
  DeliveryRef,
  PendingDelivery,
} from '../../functions/ports/delivery-ledger.js';

interface Claim {
  record: DeliveryRecord;
  published: boolean;
  claimedAt: number;
  receivedAt: number;
}

/** An in-process DeliveryLedger with DynamoDB's claim semantics, for benchmarks. */
export class MemoryLedger implements DeliveryLedger {
  readonly claims = new Map<string, Claim>();
  readonly bodies = new Map<string, { deliveryId: string; expiresAt: number }>();

  async claim(record: DeliveryRecord, now: number, leaseSeconds: number): Promise<ClaimOutcome> {
    const body = this.bodies.get(record.bodyDigest);
    if (body && body.expiresAt >= now && body.deliveryId !== record.deliveryId) {
      return { status: 'duplicate', reason: 'same-body', original: body.deliveryId };
    }
    this.bodies.set(record.bodyDigest, {
      deliveryId: record.deliveryId,
      expiresAt: record.expiresAt,
    });
    const existing = this.claims.get(record.deliveryId);
    if (existing && existing.record.expiresAt >= now) {
      if (existing.published) return { status: 'duplicate', reason: 'published' };
      if (existing.claimedAt > now - leaseSeconds)
        return { status: 'duplicate', reason: 'in-flight' };
      existing.claimedAt = now;
      return { status: 'claimed' };
    }
    this.claims.set(record.deliveryId, {
      record,
      published: false,
      claimedAt: now,
      receivedAt: now,
    });
    return { status: 'claimed' };
  }

  async markPublished({ deliveryId }: DeliveryRef): Promise<void> {
    const claim = this.claims.get(deliveryId);
    if (claim) claim.published = true;
  }

  async release({ deliveryId }: DeliveryRef): Promise<void> {
    const claim = this.claims.get(deliveryId);
    if (claim && !claim.published) claim.claimedAt = 0;
  }

  async isClaimed(deliveryId: string, nowSeconds: number): Promise<boolean> {
    const claim = this.claims.get(deliveryId);
    return claim !== undefined && claim.record.expiresAt >= nowSeconds;
  }

  async listUnpublished(receivedBefore: number, limit: number): Promise<PendingDelivery[]> {
    return [...this.claims.values()]
      .filter((claim) => !claim.published && claim.receivedAt <= receivedBefore)
      .slice(0, limit)
      .map((claim) => ({ ...claim.record, receivedAt: claim.receivedAt }));
  }
}
