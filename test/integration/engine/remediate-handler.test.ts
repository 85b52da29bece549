import { gzipSync } from 'node:zlib';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { createRemediateHandler } from '../../../functions/handlers/remediate.js';
import { lambdaContext } from '../../helpers/ingress-harness.js';
import { CLUSTER, EngineHarness } from './engine-harness.js';

const harness = new EngineHarness();
let handler: ReturnType<typeof createRemediateHandler>;

beforeAll(async () => {
  await harness.start();
  handler = createRemediateHandler({
    engine: async () => ({ deps: harness.engine, defaultCluster: CLUSTER }),
    logger: new Logger({ serviceName: 'runner-medic', logLevel: 'SILENT' }),
    metrics: new Metrics({ namespace: 'RunnerMedic', serviceName: 'runner-medic' }),
  });
});
afterAll(() => harness.stop());

const stored = async () => harness.store.scanAll(harness.clock.now());
const cloudWatch = (payload: unknown) => ({
  awslogs: { data: gzipSync(Buffer.from(JSON.stringify(payload))).toString('base64') },
});

const evictedEvent = {
  metadata: {
    name: 'r1.17a',
    namespace: 'arc-runners',
    uid: 'e1',
    creationTimestamp: '2026-03-02T09:00:00Z',
  },
  involvedObject: {
    kind: 'Pod',
    namespace: 'arc-runners',
    name: 'arc-linux-x7k2p-runner-q9z4w',
    uid: 'p1',
    apiVersion: 'v1',
  },
  reason: 'Evicted',
  message:
    'The node was low on resource: memory. Threshold quantity: 100Mi, available: 52Mi. Container runner was using 7Gi, request is 0, has larger consumption of memory. ',
  source: { component: 'kubelet', host: 'ip-10-0-1-17' },
  type: 'Warning',
  count: 1,
  lastTimestamp: '2026-03-02T09:00:00Z',
};

describe('remediate handler input', () => {
  it.each([
    ['an empty object', {}],
    ['a number', 42],
    [
      'runner-medic’s own audit event',
      { source: 'runner-medic', 'detail-type': 'Remediation', detail: {} },
    ],
    [
      'an observation missing its job',
      {
        source: 'runner-medic',
        'detail-type': 'GitHub Job Queued',
        detail: { kind: 'job.queued' },
      },
    ],
    [
      'an EC2 event with a bad instance id',
      {
        source: 'aws.ec2',
        'detail-type': 'EC2 Spot Instance Interruption Warning',
        time: '2026-03-02T09:00:00Z',
        detail: { 'instance-id': 'nope', 'instance-action': 'terminate' },
      },
    ],
    ['CloudWatch Logs data that is not gzip', { awslogs: { data: 'bm90IGd6aXA=' } }],
    [
      'a Kubernetes event without a reason',
      {
        source: 'k8s.events',
        'detail-type': 'k8s-event',
        detail: { involvedObject: { kind: 'Pod', name: 'x' } },
      },
    ],
  ])('rejects %s, logs it, and stores nothing', async (_name, input) => {
    const before = await stored();

    const result = await handler(input, lambdaContext);

    expect(result).toMatchObject({ status: 'rejected' });
    expect((result as { reason: string }).reason.length).toBeGreaterThan(0);
    expect(await stored()).toEqual(before);
    expect(harness.medicKubeCalls()).toEqual([]);
  });

  it('accepts a Fluent Bit batch from a CloudWatch Logs subscription and records the eviction', async () => {
    const result = await handler(
      cloudWatch({
        messageType: 'DATA_MESSAGE',
        owner: '123456789012',
        logGroup: '/eks/prod-eu/events',
        logStream: 'kubernetes-events',
        subscriptionFilters: ['runner-medic'],
        logEvents: [{ id: '1', timestamp: 1772442000000, message: JSON.stringify(evictedEvent) }],
      }),
      lambdaContext,
    );

    expect(result).toMatchObject({ status: 'done', recorded: 1 });
    expect((await stored()).losses).toEqual([
      expect.objectContaining({
        cluster: CLUSTER,
        runnerName: 'arc-linux-x7k2p-runner-q9z4w',
        cause: { kind: 'node-pressure-eviction', resource: 'memory', container: 'runner' },
      }),
    ]);
  });
});
