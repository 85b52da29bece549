import { Logger } from '@aws-lambda-powertools/logger';
import { jest } from '@jest/globals';
import { asAppDelivery, examplesFor } from '../../helpers/webhook-examples.js';
import { IngressHarness, TEST_SECRET, signBody } from '../../helpers/ingress-harness.js';

// An operator turns on Powertools' event logging for the webhook function.
process.env.POWERTOOLS_LOGGER_LOG_EVENT = 'true';
const output: string[] = [];
const capture = (chunk: unknown) => {
  output.push(String(chunk));
  return true;
};
const stdout = jest.spyOn(process.stdout, 'write').mockImplementation(capture);
const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(capture);

const harness = new IngressHarness({
  logger: new Logger({ serviceName: 'runner-medic', logLevel: 'DEBUG' }),
});
beforeAll(() => harness.start());
afterAll(async () => {
  await harness.stop();
  stdout.mockRestore();
  stderr.mockRestore();
  delete process.env.POWERTOOLS_LOGGER_LOG_EVENT;
});

const body = JSON.stringify({
  ...asAppDelivery(examplesFor('workflow_job')[0] ?? {}),
  test_tag: 'private-build-detail',
});

describe('github-webhook with POWERTOOLS_LOGGER_LOG_EVENT=true', () => {
  it('logs the invocation event without its signature or its body', async () => {
    const result = await harness.deliver({ event: 'workflow_job', body, deliveryId: 'log-1' });
    expect(result.body.status).toBe('accepted');

    const everything = output.join('');
    const eventLine = everything
      .split('\n')
      .find((line) => line.includes('Lambda invocation event'));
    expect(eventLine).toBeDefined();
    expect(JSON.parse(eventLine ?? '{}')).toMatchObject({
      event: {
        headers: { 'x-github-delivery': 'log-1', 'x-hub-signature-256': '[redacted]' },
        body: `[redacted: ${body.length} characters]`,
      },
    });
    expect(everything).not.toContain(signBody(TEST_SECRET, body).slice(7));
    expect(everything).not.toContain('private-build-detail');
    expect(everything).not.toContain(TEST_SECRET);
  });
});
