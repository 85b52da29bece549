import type { GithubObservation } from '../domain/observation.js';

/** A claimed GitHub delivery: the dedupe key and the observation it produced. */
export interface DeliveryRecord {
  deliveryId: string;
  event: string;
  observation: GithubObservation;
  /** Epoch seconds after which the claim no longer counts (DynamoDB TTL). */
  expiresAt: number;
}

export class StoreError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StoreError';
  }
}

export interface DeliveryLedger {
  /** Claims the delivery id with a conditional write; 'duplicate' if a live claim exists. */
  claim(record: DeliveryRecord, nowSeconds: number): Promise<'claimed' | 'duplicate'>;
  /** Drops a claim, so that GitHub's redelivery of the same id is processed. */
  release(deliveryId: string): Promise<void>;
  /** Whether a live claim exists: the delivery reached runner-medic and was processed. */
  isClaimed(deliveryId: string, nowSeconds: number): Promise<boolean>;
}
