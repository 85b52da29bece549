import { SQSClient } from '@aws-sdk/client-sqs';
import { parseRemediateInput } from '../../../functions/ingress/remediate-input.js';
import { SqsWakeScheduler } from '../../../functions/adapters/bus/sqs-wake-scheduler.js';
import { SqsSim } from '../../../sim/aws/sqs-sim.js';
import { SimClock } from '../../../sim/clock.js';

const sqs = new SqsSim();
const clock = new SimClock(Date.parse('2026-03-02T09:00:00Z'));
let scheduler: SqsWakeScheduler;
const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/runner-medic-wake';

beforeAll(async () => {
  const endpoint = await sqs.start();
  const client = new SQSClient({
    endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'sim', secretAccessKey: 'sim' },
  });
  scheduler = new SqsWakeScheduler(client, QUEUE, clock);
});
afterAll(() => sqs.stop());

describe('wake-ups through an SQS delay queue', () => {
  it('sends a wake-up delayed to the second, and leaves one past 15 minutes to the sweep', async () => {
    await scheduler.wakeAt(clock.now() + 180_500);
    await scheduler.wakeAt(clock.now() - 5_000);
    await scheduler.wakeAt(clock.now() + 901_000);

    expect(sqs.messages.map((m) => [m.QueueUrl, m.DelaySeconds])).toEqual([
      [QUEUE, 181],
      [QUEUE, 0],
    ]);
  });

  it('turns the delivered message into a wake trigger for the engine', () => {
    const body = sqs.messages[0]?.MessageBody ?? '';
    const record = { eventSource: 'aws:sqs', body, messageId: '1' };

    expect(parseRemediateInput({ Records: [record] })).toEqual({
      ok: true,
      trigger: { kind: 'wake' },
    });
    expect(
      parseRemediateInput({ Records: [{ ...record, body: '{"source":"elsewhere"}' }] }),
    ).toMatchObject({
      ok: false,
    });
    expect(parseRemediateInput({ Records: [{ ...record, body: 'not json' }] })).toMatchObject({
      ok: false,
    });
    expect(parseRemediateInput({ Records: [] })).toMatchObject({ ok: false });
  });
});
