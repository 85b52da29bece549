import { asAppDelivery, examplesFor } from '../../helpers/webhook-examples.js';
import { IngressHarness } from '../../helpers/ingress-harness.js';

const harness = new IngressHarness();
beforeAll(() => harness.start());
afterAll(() => harness.stop());

const queued = asAppDelivery(examplesFor('workflow_job').find((e) => e.action === 'queued') ?? {});
const bodyOf = (tag: string) => JSON.stringify({ ...queued, test_tag: tag });
const form = { 'content-type': 'application/x-www-form-urlencoded' };

describe('github-webhook delivery ids and content types', () => {
  it('answers 400 with a reason to a validly signed delivery id of 2,040 characters, storing nothing', async () => {
    const deliveryId = 'a'.repeat(2040);
    const before = (await harness.storedItems()).length;

    const result = await harness.deliver({
      event: 'workflow_job',
      body: bodyOf('long'),
      deliveryId,
    });

    expect(result.statusCode).toBe(400);
    expect(result.body.reason).toBe(
      'X-GitHub-Delivery is 2040 characters; at most 128 are accepted',
    );
    expect((await harness.storedItems()).length).toBe(before);
    expect(harness.eventBridge.entries).toHaveLength(0);
  });

  it('answers 400 to a delivery id with characters a GUID never has', async () => {
    const result = await harness.deliver({
      event: 'workflow_job',
      body: bodyOf('odd'),
      deliveryId: 'id#with/slash',
    });

    expect(result.statusCode).toBe(400);
    expect(result.body.reason).toMatch(/only letters, digits/);
  });

  it('accepts a GUID as GitHub sends it', async () => {
    const result = await harness.deliver({
      event: 'workflow_job',
      body: bodyOf('guid'),
      deliveryId: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    });

    expect(result.body.status).toBe('accepted');
  });

  it('verifies a form-encoded delivery over its raw body and publishes its payload', async () => {
    const body = `payload=${encodeURIComponent(bodyOf('form'))}`;

    const result = await harness.deliver({
      event: 'workflow_job',
      body,
      deliveryId: 'form-1',
      headers: form,
    });

    expect(result).toEqual({ statusCode: 202, body: { status: 'accepted', deliveryId: 'form-1' } });
    const detail = harness.eventBridge
      .details()
      .find((d) => (d as { deliveryId: string }).deliveryId === 'form-1');
    expect(detail).toMatchObject({ kind: 'job.queued', job: { jobId: expect.any(Number) } });
  });

  it('rejects a form-encoded delivery without a payload field', async () => {
    const result = await harness.deliver({
      event: 'workflow_job',
      body: 'other=1',
      deliveryId: 'form-2',
      headers: form,
    });

    expect(result.statusCode).toBe(400);
    expect(result.body.reason).toBe('form-encoded body has no payload field');
  });
});
