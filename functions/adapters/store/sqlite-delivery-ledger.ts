import type { GithubObservation } from '../../domain/model/observation.js';
import type {
  ClaimOutcome,
  DeliveryLedger,
  DeliveryRecord,
  DeliveryRef,
  PendingDelivery,
} from '../../ports/delivery-ledger.js';
import { StoreError } from '../../ports/delivery-ledger.js';
import type { SqliteDatabase } from './sqlite-database.js';

/**
 * The webhook's delivery ledger over SQLite, with the DynamoDB ledger's outcomes: a claim is a
 * lease on the delivery id and on the body's digest, and the delivery claim is the intent itself
 * (its observation, pending until published), which the sweep lists. Here the body claim and the
 * delivery claim are one transaction, so a crash leaves both of them or neither.
 */
export class SqliteDeliveryLedger implements DeliveryLedger {
  constructor(private readonly db: SqliteDatabase) {}

  async claim(
    record: DeliveryRecord,
    nowSeconds: number,
    leaseSeconds: number,
  ): Promise<ClaimOutcome> {
    const { deliveryId } = record;
    // The claim's transaction also purges expired deliveries now and then.
    return this.db.transaction(
      `claim delivery ${deliveryId}`,
      (): ClaimOutcome => {
        const holder = this.claimBody(record, nowSeconds);
        if (holder !== deliveryId)
          return { status: 'duplicate', reason: 'same-body', original: holder };
        const existing = this.db
          .statement(
            'SELECT published, claimed_at, expires_at FROM deliveries WHERE delivery_id = ?',
          )
          .get(deliveryId);
        if (!existing || Number(existing.expires_at) < nowSeconds) {
          this.db
            .statement(
              `INSERT OR REPLACE INTO deliveries (delivery_id, event, observation, body_digest,
               published, published_at, received_at, claimed_at, expires_at)
             VALUES (?, ?, ?, ?, 0, NULL, ?, ?, ?)`,
            )
            .run(
              deliveryId,
              record.event,
              JSON.stringify(record.observation),
              record.bodyDigest,
              nowSeconds,
              nowSeconds,
              record.expiresAt,
            );
          return { status: 'claimed' };
        }
        if (existing.published === 1) return { status: 'duplicate', reason: 'published' };
        // An unpublished claim whose lease ran out is taken over.
        if (Number(existing.claimed_at) <= nowSeconds - leaseSeconds) {
          this.db
            .statement('UPDATE deliveries SET claimed_at = ? WHERE delivery_id = ?')
            .run(nowSeconds, deliveryId);
          return { status: 'claimed' };
        }
        return { status: 'duplicate', reason: 'in-flight' };
      },
      { nowSeconds, tables: ['deliveries', 'delivery_bodies'] },
    );
  }

  async markPublished({ deliveryId }: DeliveryRef, nowSeconds: number): Promise<void> {
    this.db.transaction(`mark delivery ${deliveryId} published`, () => {
      const { changes } = this.db
        .statement('UPDATE deliveries SET published = 1, published_at = ? WHERE delivery_id = ?')
        .run(nowSeconds, deliveryId);
      if (Number(changes) === 0)
        throw new StoreError(
          `could not mark delivery ${deliveryId} published: it was never claimed`,
        );
    });
  }

  async release({ deliveryId }: DeliveryRef): Promise<void> {
    this.db.transaction(`release delivery ${deliveryId}`, () => {
      this.db
        .statement('UPDATE deliveries SET claimed_at = 0 WHERE delivery_id = ? AND published = 0')
        .run(deliveryId);
    });
  }

  async isClaimed(deliveryId: string, nowSeconds: number): Promise<boolean> {
    const row = this.db.read(`read delivery ${deliveryId}`, () =>
      this.db.statement('SELECT expires_at FROM deliveries WHERE delivery_id = ?').get(deliveryId),
    );
    return row !== undefined && Number(row.expires_at) >= nowSeconds;
  }

  async listUnpublished(receivedBefore: number, limit: number): Promise<PendingDelivery[]> {
    const rows = this.db.read('list unpublished deliveries', () =>
      this.db
        .statement(
          `SELECT delivery_id, event, observation, body_digest, expires_at, received_at
             FROM deliveries WHERE published = 0 AND received_at <= ?
             ORDER BY received_at, delivery_id LIMIT ?`,
        )
        .all(receivedBefore, limit),
    );
    return rows.map((row) => ({
      deliveryId: String(row.delivery_id),
      event: String(row.event),
      observation: JSON.parse(String(row.observation)) as GithubObservation,
      bodyDigest: String(row.body_digest),
      expiresAt: Number(row.expires_at),
      receivedAt: Number(row.received_at),
    }));
  }

  /** Claims the body digest for this delivery id; returns the delivery id that holds it. */
  private claimBody(record: DeliveryRecord, nowSeconds: number): string {
    const holder = this.db
      .statement('SELECT delivery_id, expires_at FROM delivery_bodies WHERE body_digest = ?')
      .get(record.bodyDigest);
    if (
      holder &&
      Number(holder.expires_at) >= nowSeconds &&
      holder.delivery_id !== record.deliveryId
    )
      return String(holder.delivery_id);
    this.db
      .statement(
        'INSERT OR REPLACE INTO delivery_bodies (body_digest, delivery_id, expires_at) VALUES (?, ?, ?)',
      )
      .run(record.bodyDigest, record.deliveryId, record.expiresAt);
    return record.deliveryId;
  }
}
