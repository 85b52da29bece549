import { readFileSync } from 'node:fs';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { parseRemediateInput } from '../../../functions/ingress/remediate-input.js';
import { createWebhookVerifier } from '../../../functions/adapters/github/webhook-verifier.js';

const sample = (name: string): unknown => JSON.parse(readFileSync(`events/${name}`, 'utf8'));

describe('the sample trigger payloads in events/ (for serverless invoke local)', () => {
  it('github-webhook: the sample is signed with the local default secret', async () => {
    const event = sample('github-webhook-workflow-job-queued.json') as LambdaFunctionURLEvent;
    const verifier = createWebhookVerifier(['runner-medic-local-secret']);

    expect(
      await verifier.verify(event.body ?? '', event.headers['x-hub-signature-256'] ?? ''),
    ).toBe(true);
  });

  it.each([
    ['k8s-pod-evicted.json', 'cluster'],
    ['ec2-spot-interruption-warning.json', 'cluster'],
  ])('remediate: %s parses into a %s trigger', (file, kind) => {
    const parsed = parseRemediateInput(sample(file));
    expect(parsed).toMatchObject({ ok: true, trigger: { kind } });
  });
});
