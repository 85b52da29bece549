import type { GithubObservation } from '../domain/model/observation.js';
import { RunnerMedicError } from './errors.js';

/** A claimed GitHub delivery: the dedupe keys and the observation it produced. */
export interface DeliveryRecord {
  deliveryId: string;
  event: string;
  observation: GithubObservation;
  /** SHA-256 of the raw signed body, hex: the same body under another delivery id is a replay. */
  bodyDigest: string;
  /** Epoch seconds after which the claim no longer counts (DynamoDB TTL). */
  expiresAt: number;
}

/** Names one claimed delivery: its id, and the digest of its body (a store may key on either). */
export type DeliveryRef = Pick<DeliveryRecord, 'deliveryId' | 'bodyDigest'>;

/** A delivery claimed but not (yet) published, as the sweep finds it. */
export interface PendingDelivery extends DeliveryRecord {
  /** Epoch seconds when it was first received. */
  receivedAt: number;
}

/**
 * What a claim found:
 * - `claimed`: the caller holds the delivery and must publish it, then `markPublished`;
 * - `published`: it was published already;
 * - `in-flight`: another invocation holds it and its lease has not run out;
 * - `same-body`: another delivery id carried the same signed body (a replay or GitHub's own
 *   duplicate) and holds it.
 */
export type ClaimOutcome =
  | { status: 'claimed' }
  | { status: 'duplicate'; reason: 'published' | 'in-flight' }
  | { status: 'duplicate'; reason: 'same-body'; original: string };

/** The store (DynamoDB) failed a read or write: worth trying again later. */
export class StoreError extends RunnerMedicError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('unavailable', message, options);
    this.name = 'StoreError';
  }
}

/**
 * The webhook's delivery ledger. A claim is a lease: the holder publishes and marks the delivery
 * published. A holder that dies leaves the delivery pending; after the lease runs out, GitHub's
 * redelivery or the sweep (`republishUnpublishedDeliveries`) claims and publishes it.
 */
export interface DeliveryLedger {
  /** Claims the delivery (and its body digest) for `leaseSeconds`; see ClaimOutcome. */
  claim(record: DeliveryRecord, nowSeconds: number, leaseSeconds: number): Promise<ClaimOutcome>;
  /** Records that the delivery reached the bus; it is no longer pending. */
  markPublished(delivery: DeliveryRef, nowSeconds: number): Promise<void>;
  /** Gives up the lease of an unpublished claim, so a redelivery or the sweep can take it now. */
  release(delivery: DeliveryRef): Promise<void>;
  /** Whether a live claim exists: the delivery reached runner-medic (published or pending). */
  isClaimed(deliveryId: string, nowSeconds: number): Promise<boolean>;
  /** Up to `limit` pending deliveries first received at or before `receivedBefore` (seconds). */
  listUnpublished(receivedBefore: number, limit: number): Promise<PendingDelivery[]>;
}
