import { asAppDelivery, examplesFor } from '../../helpers/webhook-examples.js';
import { IngressHarness } from '../../helpers/ingress-harness.js';

const harness = new IngressHarness();
beforeAll(() => harness.start());
afterAll(() => harness.stop());
afterEach(() => {
  harness.eventBridge.options = {};
});

const body = JSON.stringify(
  asAppDelivery(examplesFor('workflow_job').find((e) => e.action === 'in_progress') ?? {}),
);

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

  it('treats the same body under a new delivery id as a new delivery', async () => {
    const result = await harness.deliver({ event: 'workflow_job', body, deliveryId: 'dup-2' });
    expect(result.body.status).toBe('accepted');
  });

  it('processes a delivery id again once its claim has expired', async () => {
    await harness.deliver({ event: 'workflow_job', body, deliveryId: 'ttl-1' });
    await harness.clock.advance(3600 * 1000 + 1000);

    const again = await harness.deliver({ event: 'workflow_job', body, deliveryId: 'ttl-1' });

    expect(again.body.status).toBe('accepted');
  });

  it('answers 500 when publishing fails, releases the claim, and accepts the redelivery', async () => {
    harness.eventBridge.options = { failCall: () => true };

    const failed = await harness.deliver({ event: 'workflow_job', body, deliveryId: 'pub-1' });

    expect(failed.statusCode).toBe(500);
    expect(failed.body).toMatchObject({ status: 'error', deliveryId: 'pub-1' });
    const stored = await harness.storedItems();
    expect(stored.some((item) => item.pk === 'DELIVERY#pub-1')).toBe(false);

    harness.eventBridge.options = {};
    const redelivered = await harness.deliver({ event: 'workflow_job', body, deliveryId: 'pub-1' });
    expect(redelivered.body.status).toBe('accepted');
    expect(
      harness.eventBridge
        .details()
        .filter((d) => (d as { deliveryId: string }).deliveryId === 'pub-1'),
    ).toHaveLength(1);
  });

  it('retries an entry EventBridge reports in FailedEntryCount and publishes it once', async () => {
    const callsBefore = harness.eventBridge.calls;
    harness.eventBridge.options = { failEntry: (_entry, call) => call === callsBefore };

    const result = await harness.deliver({ event: 'workflow_job', body, deliveryId: 'partial-1' });

    expect(result.body.status).toBe('accepted');
    expect(harness.eventBridge.calls - callsBefore).toBe(2);
    expect(
      harness.eventBridge
        .details()
        .filter((d) => (d as { deliveryId: string }).deliveryId === 'partial-1'),
    ).toHaveLength(1);
  });

  it('gives up after three failed attempts with a 500 and no stored claim', async () => {
    harness.eventBridge.options = { failEntry: () => true };

    const result = await harness.deliver({ event: 'workflow_job', body, deliveryId: 'partial-2' });

    expect(result.statusCode).toBe(500);
    expect((await harness.storedItems()).some((i) => i.pk === 'DELIVERY#partial-2')).toBe(false);
  });

  it('verifies and accepts a base64-encoded body as Function URLs send non-text types', async () => {
    const result = await harness.deliver({
      event: 'workflow_job',
      body,
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
