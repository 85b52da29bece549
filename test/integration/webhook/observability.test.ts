import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { jest } from '@jest/globals';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { createMetrics } from '../../../functions/config/observability.js';
import { asAppDelivery, examplesFor } from '../../helpers/webhook-examples.js';
import { IngressHarness, TEST_SECRET, signBody } from '../../helpers/ingress-harness.js';

process.env.POWERTOOLS_METRICS_DISABLED = 'false';
const output: string[] = [];
const capture = (chunk: unknown) => {
  output.push(String(chunk));
  return true;
};
const stdout = jest.spyOn(process.stdout, 'write').mockImplementation(capture);
const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(capture);

const harness = new IngressHarness({
  logger: new Logger({ serviceName: 'runner-medic', logLevel: 'DEBUG' }),
  metrics: new Metrics({ namespace: 'RunnerMedic', serviceName: 'runner-medic' }),
});
beforeAll(() => harness.start());
afterAll(async () => {
  await harness.stop();
  stdout.mockRestore();
  stderr.mockRestore();
});

const body = JSON.stringify(asAppDelivery(examplesFor('workflow_job')[5] ?? {}));
const jsonLines = () =>
  output
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('github-webhook logs and metrics', () => {
  it('records one metric per delivery with its outcome and reason, and logs the delivery id', async () => {
    await harness.deliver({ event: 'workflow_job', body, deliveryId: 'obs-1' });
    await harness.deliver({ event: 'workflow_job', body, deliveryId: 'obs-1' });
    await harness.deliver({ event: 'workflow_job', body, deliveryId: 'obs-2', secret: 'bad' });

    const metrics = jsonLines().filter((line) => '_aws' in line);
    expect(metrics.map((m) => [m.outcome, m.reason, m.WebhookDelivery])).toEqual([
      ['accepted', 'job.queued', 1],
      ['duplicate', 'published', 1],
      ['rejected', 'bad-signature', 1],
    ]);
    const logs = jsonLines().filter((line) => 'message' in line);
    expect(logs.map((l) => [l.correlation_id, l.status])).toEqual([
      ['obs-1', 'accepted'],
      ['obs-1', 'duplicate'],
      ['obs-2', 'rejected'],
    ]);
  });

  it('never writes the secret or a signature to the logs', () => {
    const everything = output.join('');
    expect(everything).not.toContain(TEST_SECRET);
    expect(everything).not.toContain(signBody(TEST_SECRET, body).slice(7));
    expect(everything).not.toContain('sha256=');
  });
});

describe('custom metrics of a stage', () => {
  it('carry the service name serverless.yml sets per stage, the dimension its alarms filter on', () => {
    const before = output.length;
    const metrics = createMetrics('remediate', {
      POWERTOOLS_SERVICE_NAME: 'runner-medic-qa',
      POWERTOOLS_METRICS_NAMESPACE: 'RunnerMedic',
    });
    metrics.addMetric('InputRejected', MetricUnit.Count, 1);
    metrics.publishStoredMetrics();

    const emitted = output
      .slice(before)
      .join('')
      .split('\n')
      .filter((line) => line.includes('"_aws"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(emitted).toEqual([
      expect.objectContaining({
        service: 'runner-medic-qa',
        function: 'remediate',
        InputRejected: 1,
      }),
    ]);
    const directive = (
      emitted[0]?._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] }
    ).CloudWatchMetrics[0];
    expect(directive?.Namespace).toBe('RunnerMedic');
    expect(directive?.Dimensions.flat()).toContain('service');
  });
});
