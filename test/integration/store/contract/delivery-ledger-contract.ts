import type { GithubObservation } from '../../../../functions/domain/model/observation.js';
import {
  StoreError,
  type DeliveryLedger,
  type DeliveryRecord,
} from '../../../../functions/ports/delivery-ledger.js';

export interface DeliveryLedgerUnderTest {
  ledger: DeliveryLedger;
  close(): Promise<void>;
}

const observation = { kind: 'run.completed' } as unknown as GithubObservation;
const record = (deliveryId: string, bodyDigest = `digest-${deliveryId}`): DeliveryRecord => ({
  deliveryId,
  event: 'workflow_run',
  observation,
  bodyDigest,
  expiresAt: 2_000,
});
const LEASE = 60;

/** The delivery ledger's contract, one suite for every implementation. */
export function describeDeliveryLedgerContract(
  name: string,
  open: () => Promise<DeliveryLedgerUnderTest>,
): void {
  describe(name, () => {
    let subject: DeliveryLedgerUnderTest;
    let ledger: DeliveryLedger;
    beforeAll(async () => {
      subject = await open();
      ledger = subject.ledger;
    });
    afterAll(() => subject.close());

    it('knows a claimed delivery until its claim expires', async () => {
      expect(await ledger.isClaimed('d-1', 1_000)).toBe(false);
      expect(await ledger.claim(record('d-1'), 1_000, LEASE)).toEqual({ status: 'claimed' });

      expect(await ledger.isClaimed('d-1', 1_500)).toBe(true);
      expect(await ledger.isClaimed('d-1', 2_001)).toBe(false);
    });

    it('lists a claim as pending until it is marked published', async () => {
      await ledger.claim(record('d-2'), 1_000, LEASE);

      expect((await ledger.listUnpublished(1_000, 10)).map((d) => d.deliveryId)).toContain('d-2');
      expect((await ledger.listUnpublished(999, 10)).map((d) => d.deliveryId)).not.toContain('d-2');
      await ledger.markPublished(record('d-2'), 1_001);

      expect((await ledger.listUnpublished(1_500, 10)).map((d) => d.deliveryId)).not.toContain(
        'd-2',
      );
      expect(await ledger.claim(record('d-2'), 1_500, LEASE)).toEqual({
        status: 'duplicate',
        reason: 'published',
      });
    });

    it('lets an unpublished claim be taken over only after its lease, or at once after release', async () => {
      await ledger.claim(record('d-3'), 1_000, LEASE);

      expect(await ledger.claim(record('d-3'), 1_059, LEASE)).toEqual({
        status: 'duplicate',
        reason: 'in-flight',
      });
      expect(await ledger.claim(record('d-3'), 1_060, LEASE)).toEqual({ status: 'claimed' });
      expect(await ledger.claim(record('d-3'), 1_061, LEASE)).toMatchObject({
        reason: 'in-flight',
      });
      await ledger.release(record('d-3'));
      expect(await ledger.claim(record('d-3'), 1_062, LEASE)).toEqual({ status: 'claimed' });
    });

    it('refuses a second delivery id with the same body digest, and leaves nothing pending for it', async () => {
      await ledger.claim(record('d-4', 'same'), 1_000, LEASE);

      expect(await ledger.claim(record('d-5', 'same'), 1_000, LEASE)).toEqual({
        status: 'duplicate',
        reason: 'same-body',
        original: 'd-4',
      });
      expect(await ledger.isClaimed('d-5', 1_000)).toBe(false);
      expect((await ledger.listUnpublished(1_000, 10)).map((d) => d.deliveryId)).not.toContain(
        'd-5',
      );
    });

    it('lets one of many concurrent claims of a delivery win', async () => {
      const claims = await Promise.all(
        Array.from({ length: 8 }, () => ledger.claim(record('d-race'), 1_000, LEASE)),
      );
      expect(claims.filter((c) => c.status === 'claimed')).toHaveLength(1);
      expect(claims.filter((c) => c.status === 'duplicate')).toHaveLength(7);
    });

    it('keeps a taken-over or released claim pending from its first receipt, until published', async () => {
      await ledger.claim(record('d-6'), 1_000, LEASE);
      await ledger.release(record('d-6'));
      expect(await ledger.claim(record('d-6'), 1_010, LEASE)).toEqual({ status: 'claimed' });
      const pending = (await ledger.listUnpublished(1_000, 100)).find(
        (d) => d.deliveryId === 'd-6',
      );
      expect(pending).toEqual({ ...record('d-6'), receivedAt: 1_000 });

      await ledger.markPublished(record('d-6'), 1_011);
      // Released after publication, it stays published.
      await ledger.release(record('d-6'));
      expect(await ledger.claim(record('d-6'), 1_200, LEASE)).toEqual({
        status: 'duplicate',
        reason: 'published',
      });
      expect((await ledger.listUnpublished(1_500, 100)).map((d) => d.deliveryId)).not.toContain(
        'd-6',
      );
    });

    it('lists at most the limit of pending deliveries', async () => {
      for (const id of ['d-7', 'd-8', 'd-9']) await ledger.claim(record(id), 1_100, LEASE);
      expect(await ledger.listUnpublished(1_100, 2)).toHaveLength(2);
    });

    it('refuses to mark published a delivery never claimed', async () => {
      await expect(ledger.markPublished(record('d-never'), 1_000)).rejects.toThrow(StoreError);
    });
  });
}
