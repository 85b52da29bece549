import fc from 'fast-check';
import { asAppDelivery, examplesFor } from '../../helpers/webhook-examples.js';
import {
  IngressHarness,
  TEST_SECRET,
  functionUrlEvent,
  signBody,
} from '../../helpers/ingress-harness.js';

const harness = new IngressHarness();
beforeAll(() => harness.start());
afterAll(() => harness.stop());

const queued = asAppDelivery(examplesFor('workflow_job').find((e) => e.action === 'queued') ?? {});
const queuedBody = JSON.stringify(queued);
const withoutJobId = JSON.stringify({
  ...queued,
  workflow_job: { ...(queued.workflow_job as object), id: undefined, labels: 'not-a-list' },
});

interface BadInput {
  name: string;
  status: number;
  reason: RegExp;
  build: () => ReturnType<typeof functionUrlEvent>;
}

const badInputs: BadInput[] = [
  {
    name: 'a GET',
    status: 405,
    reason: /method GET is not allowed/,
    build: () => functionUrlEvent({ event: 'workflow_job', body: queuedBody, method: 'GET' }),
  },
  {
    name: 'a body over the 1 MiB limit',
    status: 413,
    reason: /exceeds the limit of 1048576 bytes/,
    build: () => functionUrlEvent({ event: 'workflow_job', body: 'x'.repeat(1024 * 1024 + 1) }),
  },
  {
    name: 'a base64 body over the limit',
    status: 413,
    reason: /exceeds the limit/,
    build: () =>
      functionUrlEvent({ event: 'workflow_job', body: 'y'.repeat(1024 * 1024 + 10), base64: true }),
  },
  {
    name: 'no signature',
    status: 401,
    reason: /X-Hub-Signature-256 header is missing/,
    build: async () => {
      const event = await functionUrlEvent({ event: 'workflow_job', body: queuedBody });
      delete event.headers['x-hub-signature-256'];
      return event;
    },
  },
  {
    name: 'a signature made with another secret',
    status: 401,
    reason: /signature does not match/,
    build: () => functionUrlEvent({ event: 'workflow_job', body: queuedBody, secret: 'wrong' }),
  },
  {
    name: 'a signature over a different body',
    status: 401,
    reason: /signature does not match/,
    build: async () => {
      const event = await functionUrlEvent({ event: 'workflow_job', body: queuedBody });
      event.body = queuedBody.replace('queued', 'completed');
      return event;
    },
  },
  {
    name: 'a malformed signature header',
    status: 401,
    reason: /signature does not match/,
    build: () =>
      functionUrlEvent({
        event: 'workflow_job',
        body: queuedBody,
        headers: { 'x-hub-signature-256': 'sha1=abc' },
      }),
  },
  {
    name: 'no X-GitHub-Event',
    status: 400,
    reason: /X-GitHub-Event header is missing/,
    build: async () => {
      const event = await functionUrlEvent({ event: 'workflow_job', body: queuedBody });
      delete event.headers['x-github-event'];
      return event;
    },
  },
  {
    name: 'no X-GitHub-Delivery',
    status: 400,
    reason: /X-GitHub-Delivery header is missing/,
    build: async () => {
      const event = await functionUrlEvent({ event: 'workflow_job', body: queuedBody });
      delete event.headers['x-github-delivery'];
      return event;
    },
  },
  {
    name: 'broken JSON, correctly signed',
    status: 400,
    reason: /not valid JSON/,
    build: () => functionUrlEvent({ event: 'workflow_job', body: '{"action": "queued",' }),
  },
  {
    name: 'a payload missing the job id, with bad labels',
    status: 400,
    reason: /workflow_job\.id, workflow_job\.labels/,
    build: () => functionUrlEvent({ event: 'workflow_job', body: withoutJobId }),
  },
  {
    name: 'a payload with no action',
    status: 400,
    reason: /action/,
    build: () => functionUrlEvent({ event: 'workflow_job', body: '{"workflow_job":{}}' }),
  },
  {
    name: 'a JSON array',
    status: 400,
    reason: /action/,
    build: () => functionUrlEvent({ event: 'workflow_run', body: '[1,2,3]' }),
  },
];

describe('github-webhook rejects bad input with a clear status and changes nothing', () => {
  it.each(badInputs)('answers $status to $name', async ({ status, reason, build }) => {
    const published = harness.eventBridge.entries.length;

    const result = await harness.deliver(await build());

    expect(result.statusCode).toBe(status);
    expect(result.body.status).toBe('rejected');
    expect(result.body.reason).toMatch(reason);
    expect(await harness.storedItems()).toEqual([]);
    expect(harness.eventBridge.entries).toHaveLength(published);
  });

  it.each([
    ['ping', '{"zen":"Keep it logically awesome.","hook_id":1}', /ping/],
    ['push', '{"ref":"refs/heads/main"}', /event push is not handled/],
    ['workflow_job', JSON.stringify({ ...queued, action: 'renamed' }), /action renamed/],
  ])('ignores a %s delivery with 202 and stores nothing', async (event, body, reason) => {
    const result = await harness.deliver({ event, body });

    expect(result.statusCode).toBe(202);
    expect(result.body).toMatchObject({ status: 'ignored' });
    expect(result.body.reason).toMatch(reason);
    expect(await harness.storedItems()).toEqual([]);
    expect(harness.eventBridge.entries).toHaveLength(0);
  });
});

describe('github-webhook under random input (property)', () => {
  const headerValue = fc.oneof(fc.constant(undefined), fc.string({ maxLength: 80 }));
  const eventName = fc.oneof(
    fc.constantFrom('workflow_job', 'workflow_run', 'ping', 'push'),
    fc.string({ maxLength: 20 }),
  );
  const body = fc.oneof(
    fc.string({ maxLength: 400 }),
    fc.json({ maxDepth: 3 }),
    fc.constant(queuedBody),
    fc
      .constantFrom('queued', 'completed', 'in_progress')
      .map((action) => JSON.stringify({ ...queued, action })),
  );

  it('never answers 5xx and stores nothing unless the signature is valid', async () => {
    let delivery = 0;
    await fc.assert(
      fc.asyncProperty(
        body,
        eventName,
        fc.constantFrom('valid', 'wrong-secret', 'random', 'missing'),
        headerValue,
        fc.boolean(),
        fc.constantFrom('POST', 'GET', 'PUT'),
        async (payload, event, signatureKind, randomSignature, base64, method) => {
          const deliveryId = `prop-${delivery++}`;
          const request = await functionUrlEvent({
            event,
            body: payload,
            deliveryId,
            base64,
            method,
            secret: signatureKind === 'wrong-secret' ? 'not-the-secret' : TEST_SECRET,
          });
          if (signatureKind === 'missing') delete request.headers['x-hub-signature-256'];
          if (signatureKind === 'random')
            request.headers['x-hub-signature-256'] = randomSignature ?? '';

          const result = await harness.deliver(request);

          expect(result.statusCode).toBeLessThan(500);
          const stored = (await harness.storedItems()).some(
            (item) => item.deliveryId === deliveryId,
          );
          const validlySigned =
            method === 'POST' &&
            (signatureKind === 'valid' ||
              (signatureKind === 'random' && randomSignature === signBody(TEST_SECRET, payload)));
          if (stored) expect(validlySigned).toBe(true);
          if (result.body.status === 'accepted') expect(stored).toBe(true);
        },
      ),
      { numRuns: 150, seed: 20261202 },
    );
  });
});
