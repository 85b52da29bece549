import type { DeliveryLedger } from '../ports/delivery-ledger.js';
import type { EventPublisher } from '../ports/event-publisher.js';
import { DELIVERY_CLAIM_LEASE_SECONDS } from './delivery-lease.js';
import { observationEvent } from './normalize-webhook.js';

export interface RepublishOptions {
  /**
   * The webhook's claim lease: a pending delivery younger than this may still be in flight.
   * Always DELIVERY_CLAIM_LEASE_SECONDS, its default; a caller has no reason to pass another.
   */
  leaseSeconds?: number;
  /** At most this many deliveries per call, so one sweep stays short. */
  limit?: number;
}

export interface RepublishResult {
  /** Delivery ids published by this call. */
  published: string[];
  /** Delivery ids that are no longer pending (published meanwhile, a replayed body, expired). */
  settled: string[];
  /** Delivery ids whose publication failed; they stay pending for the next sweep. */
  failed: { deliveryId: string; error: unknown }[];
}

/**
 * Publishes every delivery the webhook claimed but did not publish (it died or timed out between
 * the two). A `queued` delivery gets no second webhook, so without this its job would never be
 * seen. Each delivery is claimed again first, so a redelivery or another sweep racing this one
 * publishes it at most once; one failure does not stop the others.
 */
export async function republishUnpublishedDeliveries(
  ledger: DeliveryLedger,
  publisher: EventPublisher,
  now: number,
  options: RepublishOptions = {},
): Promise<RepublishResult> {
  const nowSeconds = Math.floor(now / 1000);
  const leaseSeconds = options.leaseSeconds ?? DELIVERY_CLAIM_LEASE_SECONDS;
  const pending = await ledger.listUnpublished(nowSeconds - leaseSeconds, options.limit ?? 100);
  const result: RepublishResult = { published: [], settled: [], failed: [] };
  for (const delivery of pending) {
    const { deliveryId } = delivery;
    try {
      if (delivery.expiresAt < nowSeconds) {
        result.settled.push(deliveryId);
        continue;
      }
      const claim = await ledger.claim(delivery, nowSeconds, leaseSeconds);
      if (claim.status === 'duplicate') {
        if (claim.reason !== 'in-flight') result.settled.push(deliveryId);
        continue;
      }
      try {
        await publisher.publish([observationEvent(delivery.observation)]);
      } catch (error) {
        await ledger.release(delivery);
        throw error;
      }
      await ledger.markPublished(delivery, nowSeconds);
      result.published.push(deliveryId);
    } catch (error) {
      result.failed.push({ deliveryId, error });
    }
  }
  return result;
}
