import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { parseRemediateInput } from '../../../functions/ingress/remediate-input.js';
import { envelope, exportedEvent } from '../domain/fixtures.js';

const long = (n: number) => 'a'.repeat(n);
const awslogs = (logEvents: unknown[]) => ({
  awslogs: {
    data: gzipSync(
      JSON.stringify({ messageType: 'DATA_MESSAGE', logGroup: 'g', logStream: 's', logEvents }),
    ).toString('base64'),
  },
});
const observation = (job: Record<string, unknown>) => ({
  source: 'runner-medic',
  'detail-type': 'GitHub Job Started',
  detail: {
    kind: 'job.started',
    deliveryId: 'd-1',
    installationId: 1,
    repository: { id: 1, fullName: 'acme/app', owner: 'acme', name: 'app' },
    receivedAt: '2026-12-02T10:00:00Z',
    job: {
      jobId: 1,
      runId: 2,
      runAttempt: 1,
      name: 'build',
      workflowName: null,
      headBranch: null,
      labels: [],
      status: 'in_progress',
      conclusion: null,
      runnerId: null,
      runnerName: null,
      runnerGroupId: null,
      runnerGroupName: null,
      htmlUrl: 'https://github.com/acme/app/actions/runs/2/job/1',
      createdAt: null,
      startedAt: null,
      completedAt: null,
      ...job,
    },
  },
});

describe('remediate input: over-long and out-of-range fields are rejected with a reason', () => {
  it.each<[string, unknown, RegExp]>([
    [
      'an event naming a pod of 3,000 characters',
      envelope(exportedEvent({ reason: 'Evicted', message: 'm', name: long(3000) })),
      /involvedObject\.name/,
    ],
    [
      'an event with a namespace of 200 characters',
      envelope({
        ...exportedEvent({ reason: 'Evicted', message: 'm' }),
        involvedObject: {
          ...exportedEvent({ reason: 'Evicted', message: 'm' }).involvedObject,
          namespace: long(200),
        },
      }),
      /involvedObject\.namespace/,
    ],
    [
      'an event with a message of 1 MB',
      envelope(exportedEvent({ reason: 'Evicted', message: long(1_000_000) })),
      /message/,
    ],
    [
      'an event with a cluster name of 5,000 characters',
      envelope({ ...exportedEvent({ reason: 'Evicted', message: 'm' }), clusterName: long(5000) }),
      /clusterName/,
    ],
    ['an observation with run attempt 1e300', observation({ runAttempt: 1e300 }), /runAttempt/],
    ['an observation with job id 1e300', observation({ jobId: 1e300 }), /jobId/],
    ['an observation with a negative run id', observation({ runId: -5 }), /runId/],
    ['an observation with a job name of 100 KB', observation({ name: long(100_000) }), /name/],
    [
      'an EC2 event with an instance id of 5,000 characters',
      {
        source: 'aws.ec2',
        'detail-type': 'EC2 Spot Instance Interruption Warning',
        time: '2026-12-02T10:00:00Z',
        detail: { 'instance-id': `i-${'0'.repeat(5000)}`, 'instance-action': 'terminate' },
      },
      /instance-id/,
    ],
    [
      'an SQS batch of 11 wake-ups',
      {
        Records: Array.from({ length: 11 }, () => ({
          eventSource: 'aws:sqs',
          body: '{"source":"runner-medic.wake"}',
        })),
      },
      /more than 10 SQS records/,
    ],
    [
      'an SQS wake-up with a body of 1 MB',
      { Records: [{ eventSource: 'aws:sqs', body: long(1_000_000) }] },
      /SQS message body over/,
    ],
  ])('%s', (_name, input, reason) => {
    const parsed = parseRemediateInput(input);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(reason);
  });

  it('rejects only the bad record of a CloudWatch Logs batch and keeps the others', () => {
    const good = (name: string) =>
      JSON.stringify(exportedEvent({ reason: 'Evicted', message: 'm', name }));
    const parsed = parseRemediateInput(
      awslogs([
        { id: 'ok-1', timestamp: 1, message: good('runner-a') },
        { id: 'long', timestamp: 1, message: good(long(3000)) },
        { id: 'huge', timestamp: 1, message: long(300 * 1024) },
        { id: 'ok-2', timestamp: 1, message: good('runner-b') },
        'not even an object',
      ]),
    );

    expect(parsed.ok).toBe(true);
    if (!parsed.ok || parsed.trigger.kind !== 'cluster')
      throw new Error('expected a cluster input');
    const input = parsed.trigger.input;
    if (input.kind !== 'kube-events') throw new Error('expected kube events');
    expect(input.events.map((e) => e.involvedObject.name)).toEqual(['runner-a', 'runner-b']);
    expect(input.rejected.map((r) => r.id)).toEqual(['long', 'huge', null]);
    expect(input.rejected.every((r) => r.reason.length > 0)).toBe(true);
  });

  it('never throws, whatever JSON arrives', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        expect(() => parseRemediateInput(value)).not.toThrow();
        expect(() => parseRemediateInput(envelope(value))).not.toThrow();
      }),
      { numRuns: 300, seed: 8 },
    );
  });

  it('reads a wake-up batch as Lambda delivers it from SQS, and names a bad record by its path', () => {
    const record = {
      messageId: '059f36b4-87a3-44ab-83d2-661975830a7d',
      receiptHandle: 'AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a',
      body: '{"source":"runner-medic.wake","detail-type":"Wake","detail":{"at":1772442000000}}',
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: '1772441820000',
        SenderId: 'AIDAIENQZJOLO23YVJ4VO',
        ApproximateFirstReceiveTimestamp: '1772442000000',
      },
      messageAttributes: {},
      md5OfBody: 'e4e68fb7bd0e697a0ae8f1bb342846b3',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:runner-medic-wake',
      awsRegion: 'eu-west-1',
    };
    expect(parseRemediateInput({ Records: [record] })).toEqual({
      ok: true,
      trigger: { kind: 'wake' },
    });
    const mixed = parseRemediateInput({
      Records: [record, { ...record, body: '{"source":"elsewhere"}' }],
    });
    expect(mixed.ok).toBe(false);
    if (!mixed.ok) expect(mixed.reason).toMatch(/^bad wake-up batch: Records\.1\.body\.source: /);
    // Counted before any body is read: eleven broken records are refused for their number alone.
    const eleven = Array.from({ length: 11 }, () => ({ ...record, body: 'x'.repeat(300_000) }));
    expect(parseRemediateInput({ Records: eleven })).toEqual({
      ok: false,
      reason: 'bad wake-up batch: Records: more than 10 SQS records',
    });
  });

  it('refuses CloudWatch Logs data that is not base64 gzip JSON, naming the field', () => {
    for (const data of ['%%%', Buffer.from('{"logEvents":[]}').toString('base64'), 42]) {
      expect(parseRemediateInput({ awslogs: { data } })).toEqual({
        ok: false,
        reason: 'bad CloudWatch Logs batch: awslogs.data: not base64 gzip JSON',
      });
    }
  });
});
