import { asAppDelivery, examplesFor } from '../../helpers/webhook-examples.js';
import { IngressHarness } from '../../helpers/ingress-harness.js';

const harness = new IngressHarness();
beforeAll(() => harness.start());
afterAll(() => harness.stop());
afterEach(() => {
  harness.eventBridge.options = {};
});

const example = asAppDelivery(
  examplesFor('workflow_job').find((e) => e.action === 'in_progress') ?? {},
);
/** A distinct signed body per test: the same body under another delivery id is a replay. */
const bodyOf = (tag: string) => JSON.stringify({ ...example, test_tag: tag });
const body = bodyOf('shared');
const publishedFor = (deliveryId: string) =>
  harness.eventBridge
    .details()
    .filter((d) => (d as { deliveryId: string }).deliveryId === deliveryId);

describe('github-webhook deduplication and redelivery', () => {
  it('accepts a delivery once and answers 202 duplicate to the same delivery id', async () => {
    const first = await harness.deliver({ event: 'workflow_job', body, deliveryId: 'dup-1' });
    const second = await harness.deliver({ event: 'workflow_job', body, deliveryId: 'dup-1' });

    expect(first.body.status).toBe('accepted');
    expect(second).toEqual({ statusCode: 202, body: { status: 'duplicate', deliveryId: 'dup-1' } });
    const published = harness.eventBridge
      .details()
      .filter((d) => (d as { deliveryId: string }).deliveryId === 'dup-1');
    expect(published).toHaveLength(1);
  });

  it('recognises the same signed body under a new delivery id as a replay and publishes it once', async () => {
    const result = await harness.deliver({ event: 'workflow_job', body, deliveryId: 'dup-2' });
    const again = await harness.deliver({ event: 'workflow_job', body, deliveryId: 'dup-3' });

    expect(result).toEqual({
      statusCode: 202,
      body: { status: 'duplicate', deliveryId: 'dup-2', reason: 'same body as delivery dup-1' },
    });
    expect(again.body).toMatchObject({
      status: 'duplicate',
      reason: 'same body as delivery dup-1',
    });
    expect(publishedFor('dup-2')).toHaveLength(0);
    expect(publishedFor('dup-3')).toHaveLength(0);
    const stored = await harness.storedItems();
    expect(stored.filter((i) => i.sk === 'dup-2' || i.deliveryId === 'dup-2')).toEqual([]);
  });

  it('processes a delivery id again once its claim has expired', async () => {
    const body = bodyOf('ttl-1');
    await harness.deliver({ event: 'workflow_job', body, deliveryId: 'ttl-1' });
    await harness.clock.advance(3600 * 1000 + 1000);

    const again = await harness.deliver({ event: 'workflow_job', body, deliveryId: 'ttl-1' });

    expect(again.body.status).toBe('accepted');
  });

  it('answers 500 when publishing fails, keeps the delivery pending, and accepts the redelivery', async () => {
    const body = bodyOf('pub-1');
    harness.eventBridge.options = { failCall: () => true };

    const failed = await harness.deliver({ event: 'workflow_job', body, deliveryId: 'pub-1' });

    expect(failed.statusCode).toBe(500);
    expect(failed.body).toMatchObject({ status: 'error', deliveryId: 'pub-1' });
    const stored = await harness.storedItems();
    expect(stored.find((item) => item.deliveryId === 'pub-1')).toMatchObject({ published: false });
    expect(
      stored.some((item) => item.deliveryId === 'pub-1' && item.pend === 'DELIVERY-PENDING'),
    ).toBe(true);

    harness.eventBridge.options = {};
    const redelivered = await harness.deliver({ event: 'workflow_job', body, deliveryId: 'pub-1' });
    expect(redelivered.body.status).toBe('accepted');
    expect(publishedFor('pub-1')).toHaveLength(1);
    const after = await harness.storedItems();
    expect(after.find((item) => item.deliveryId === 'pub-1')).toMatchObject({ published: true });
    expect(
      after.some((item) => item.deliveryId === 'pub-1' && item.pend === 'DELIVERY-PENDING'),
    ).toBe(false);
  });

  it('retries an entry EventBridge reports in FailedEntryCount and publishes it once', async () => {
    const callsBefore = harness.eventBridge.calls;
    harness.eventBridge.options = { failEntry: (_entry, call) => call === callsBefore };

    const result = await harness.deliver({
      event: 'workflow_job',
      body: bodyOf('partial-1'),
      deliveryId: 'partial-1',
    });

    expect(result.body.status).toBe('accepted');
    expect(harness.eventBridge.calls - callsBefore).toBe(2);
    expect(
      harness.eventBridge
        .details()
        .filter((d) => (d as { deliveryId: string }).deliveryId === 'partial-1'),
    ).toHaveLength(1);
  });

  it('gives up after three failed attempts with a 500, leaving the delivery for the sweep', async () => {
    harness.eventBridge.options = { failEntry: () => true };

    const result = await harness.deliver({
      event: 'workflow_job',
      body: bodyOf('partial-2'),
      deliveryId: 'partial-2',
    });

    expect(result.statusCode).toBe(500);
    expect(publishedFor('partial-2')).toHaveLength(0);
    const stored = await harness.storedItems();
    expect(stored.some((i) => i.deliveryId === 'partial-2' && i.pend === 'DELIVERY-PENDING')).toBe(
      true,
    );
  });

  it('verifies and accepts a base64-encoded body as Function URLs send non-text types', async () => {
    const result = await harness.deliver({
      event: 'workflow_job',
      body: bodyOf('b64-1'),
      deliveryId: 'b64-1',
      base64: true,
    });

    expect(result.body.status).toBe('accepted');
    const detail = harness.eventBridge
      .details()
      .find((d) => (d as { deliveryId: string }).deliveryId === 'b64-1');
    expect(detail).toMatchObject({ kind: 'job.started', job: { jobId: 2832853555 } });
  });
});
