import { parseCloudWatchKubeEvents } from '../../../functions/domain/parse/parse-cloudwatch-logs.js';
import { parseClusterInput } from '../../../functions/domain/parse/parse-cluster-input.js';
import { parseEc2Event } from '../../../functions/domain/parse/parse-ec2-event.js';
import { parseExportedKubeEvent } from '../../../functions/domain/parse/parse-kube-event.js';
import {
  instanceIdFromProviderId,
  parseEphemeralRunner,
  parseNode,
  parsePod,
} from '../../../functions/domain/parse/parse-kube-object.js';
import {
  CLUSTER,
  T0,
  envelope,
  exportedEvent,
  iso,
  rawEr,
  rawNode,
  rawPod,
  without,
} from './fixtures.js';

describe('parseEphemeralRunner', () => {
  it.each([
    ['ARC ≤ 0.11 bool map', { a: true, b: true }, 'bool', [null, null]],
    ['ARC ≥ 0.12 time map', { a: iso(T0), b: iso(T0 + 5000) }, 'time', [T0, T0 + 5000]],
    ['no failures', undefined, 'none', []],
  ])('reads the %s `failures` shape', (_, failures, shape, ats) => {
    const r = parseEphemeralRunner(rawEr(failures ? { failures } : {}), CLUSTER);
    expect(r.ok && r.value.failuresShape).toBe(shape);
    expect(r.ok && r.value.failures.map((f) => f.at)).toEqual(ats);
  });

  it('reads the job fields, with jobId only from ARC ≥ 0.13', () => {
    const job = {
      jobRepositoryName: 'acme/app',
      workflowRunId: 9_000_000_001,
      jobDisplayName: 'build',
    };
    const old = parseEphemeralRunner(rawEr({ job }), CLUSTER);
    const fresh = parseEphemeralRunner(rawEr({ job: { ...job, jobId: 'b2c3-guid' } }), CLUSTER);
    expect(old.ok && old.value.job).toMatchObject({ ...job, jobId: null });
    expect(fresh.ok && fresh.value.job.jobId).toBe('b2c3-guid');
  });

  it.each([
    ['a string', 'garbage'],
    ['null', null],
    ['no metadata name', { metadata: {}, status: {} }],
    ['failures of numbers', { metadata: { name: 'x' }, status: { failures: { a: 3 } } }],
  ])('returns a reason, never throws, for %s', (_, raw) => {
    const r = parseEphemeralRunner(raw, CLUSTER);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/not an EphemeralRunner/);
  });
});

describe('parsePod and parseNode', () => {
  it('accepts Date objects as @kubernetes/client-node returns them', () => {
    const raw = rawPod();
    const r = parsePod(
      { ...raw, metadata: { ...raw.metadata, creationTimestamp: new Date(T0) } },
      CLUSTER,
    );
    expect(r.ok && r.value.metadata.creationTimestamp).toBe(T0);
  });

  it('keeps the image of the runner container (its tag is the runner version), null without one', () => {
    const raw = rawPod();
    const containers = [
      { name: 'init-dind', image: 'docker:dind' },
      { name: 'runner', image: 'ghcr.io/actions/actions-runner:2.328.0' },
    ];
    const r = parsePod({ ...raw, spec: { ...raw.spec, containers } }, CLUSTER);
    expect(r.ok && r.value.runnerImage).toBe('ghcr.io/actions/actions-runner:2.328.0');
    const other = parsePod({ ...raw, spec: { ...raw.spec, containers: [containers[0]] } }, CLUSTER);
    expect(other.ok && other.value.runnerImage).toBeNull();
  });

  it('derives the EC2 instance id from providerID', () => {
    const r = parseNode(rawNode(), CLUSTER);
    expect(r.ok && r.value.instanceId).toBe('i-0123456789abcdef0');
  });

  it.each([
    ['aws:///eu-west-1a/i-0abc', 'i-0abc'],
    ['gce://project/zone/vm-1', null],
    [null, null],
  ])('instanceIdFromProviderId(%s) = %s', (p, id) => {
    expect(instanceIdFromProviderId(p)).toBe(id);
  });
});

describe('parseExportedKubeEvent', () => {
  const detail = exportedEvent({
    reason: 'Evicted',
    message: 'The node had condition: [MemoryPressure].',
  });

  it.each([
    ['the EventBridge envelope', envelope(detail)],
    ['the bare detail', detail],
  ])('parses %s', (_, raw) => {
    const r = parseExportedKubeEvent(raw);
    expect(r.ok && r.value).toMatchObject({
      cluster: CLUSTER,
      reason: 'Evicted',
      sourceComponent: 'kubelet',
      at: T0,
      involvedObject: { kind: 'Pod', name: 'arc-runner-set-2fh9q-runner-tkvlz' },
    });
  });

  it('needs a cluster name from the event or the options', () => {
    const bare = without(detail, 'clusterName');
    expect(parseExportedKubeEvent(bare).ok).toBe(false);
    const r = parseExportedKubeEvent(bare, { defaultCluster: 'local' });
    expect(r.ok && r.value.cluster).toBe('local');
  });

  it.each([[42], ['x'], [{ detail: {} }], [{ reason: 'Evicted' }]])('rejects %p', (raw) => {
    expect(parseExportedKubeEvent(raw).ok).toBe(false);
  });
});

describe('parseCloudWatchKubeEvents (Fluent Bit kubernetes_events)', () => {
  const event = without(
    exportedEvent({
      reason: 'Evicted',
      message: 'The node had condition: [DiskPressure].',
    }),
    'clusterName',
  );
  const data = {
    owner: '123456789012',
    logGroup: '/eks/prod-eu/events',
    logStream: 'kube-events',
    subscriptionFilters: ['runner-medic'],
    messageType: 'DATA_MESSAGE',
    logEvents: [
      { id: '1', timestamp: T0, message: JSON.stringify(event) },
      { id: '2', timestamp: T0, message: JSON.stringify({ log: JSON.stringify(event) }) },
      { id: '3', timestamp: T0, message: 'not json' },
      { id: '4', timestamp: T0, message: '{"hello":"world"}' },
    ],
  };

  it('parses events, keeps the rejects with reasons', () => {
    const r = parseCloudWatchKubeEvents(data, { defaultCluster: CLUSTER });
    expect(r.ok && r.value.events.map((e) => e.reason)).toEqual(['Evicted', 'Evicted']);
    expect(r.ok && r.value.rejected.map((x) => x.id)).toEqual(['3', '4']);
  });

  it('reads an Event nested as an object under `log`, and rejects a log event of the wrong shape by its id', () => {
    const r = parseCloudWatchKubeEvents(
      {
        ...data,
        logEvents: [
          { id: '5', timestamp: T0, message: JSON.stringify({ log: event }) },
          { id: '6', timestamp: 'yesterday', message: 'x' },
          { id: 7, message: 'x' },
          'not an object',
          { id: 'x'.repeat(300), message: 42 },
        ],
      },
      { defaultCluster: CLUSTER },
    );
    expect(r.ok && r.value.events.map((e) => e.reason)).toEqual(['Evicted']);
    const rejected = r.ok ? r.value.rejected : [];
    expect(rejected.map((x) => x.id)).toEqual(['6', null, null, 'x'.repeat(128)]);
    expect(rejected[0]?.reason).toMatch(/^bad log event: timestamp: /);
  });

  it('yields nothing for a CONTROL_MESSAGE', () => {
    const r = parseCloudWatchKubeEvents({ ...data, messageType: 'CONTROL_MESSAGE' }, {});
    expect(r.ok && r.value.events).toEqual([]);
  });

  it('goes through parseClusterInput too', () => {
    const r = parseClusterInput(data, { defaultCluster: CLUSTER });
    expect(r.ok && r.value.kind).toBe('kube-events');
  });
});

describe('parseEc2Event', () => {
  const ec2 = (detailType: string, detail: object) => ({
    version: '0',
    id: 'e1',
    'detail-type': detailType,
    source: 'aws.ec2',
    account: '123456789012',
    time: iso(T0),
    region: 'eu-west-1',
    resources: ['arn:aws:ec2:eu-west-1b:instance/i-0123456789abcdef0'],
    detail,
  });

  it.each([
    [
      ec2('EC2 Spot Instance Interruption Warning', {
        'instance-id': 'i-0123456789abcdef0',
        'instance-action': 'terminate',
      }),
      { kind: 'ec2-spot-interruption-warning', instanceId: 'i-0123456789abcdef0', at: T0 },
    ],
    [
      ec2('EC2 Instance State-change Notification', {
        'instance-id': 'i-0123456789abcdef0',
        state: 'shutting-down',
      }),
      { kind: 'ec2-instance-state-change', state: 'shutting-down', region: 'eu-west-1' },
    ],
  ])('parses %#', (raw, expected) => {
    const r = parseEc2Event(raw);
    expect(r.ok && r.value).toMatchObject(expected);
    expect(parseClusterInput(raw).ok).toBe(true);
  });

  it.each([
    ['another detail-type', ec2('EC2 Instance Rebalance Recommendation', { 'instance-id': 'i-1' })],
    ['a bad instance id', ec2('EC2 Spot Instance Interruption Warning', { 'instance-id': 'x' })],
    ['another source', { source: 'aws.s3', 'detail-type': 'x', detail: {} }],
  ])('rejects %s', (_, raw) => {
    expect(parseEc2Event(raw).ok).toBe(false);
  });
});
