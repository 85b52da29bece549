import { findRunnerLoss, lossSignalOf } from '../../../functions/domain/classify/annotations.js';
import {
  attributeEviction,
  classifyEc2Event,
  classifyEphemeralRunner,
  classifyEvent,
  classifyNode,
  classifyPod,
} from '../../../functions/domain/classify/classify.js';
import type { KubeEvent } from '../../../functions/domain/model/cluster-facts.js';
import type { LossCause } from '../../../functions/domain/model/loss.js';
import { parseExportedKubeEvent } from '../../../functions/domain/parse/parse-kube-event.js';
import {
  parseEphemeralRunner,
  parseNode,
  parsePod,
} from '../../../functions/domain/parse/parse-kube-object.js';
import { isArcOwned, isRunnerPod } from '../../../functions/domain/correlate/runner-guard.js';
import {
  CLUSTER,
  LOST_ANNOTATION,
  SHUTDOWN_ANNOTATION,
  T0,
  erOwner,
  exportedEvent,
  rawEr,
  rawNode,
  rawPod,
  runnerLabels,
  type RawPodOptions,
  without,
} from './fixtures.js';

const pod = (o: RawPodOptions) => {
  const r = parsePod(rawPod(o), CLUSTER);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
};
const event = (o: Parameters<typeof exportedEvent>[0]): KubeEvent => {
  const r = parseExportedKubeEvent(exportedEvent(o));
  if (!r.ok) throw new Error(r.reason);
  return r.value;
};

const LOW_MEMORY =
  'The node was low on resource: memory. Threshold quantity: 100Mi, available: 52Mi. Container runner was using 3Gi, request is 0, has larger consumption of memory. ';

describe('classifyPod', () => {
  it.each<[string, RawPodOptions, LossCause, string]>([
    [
      'seed 000: admission reject on MemoryPressure',
      { phase: 'Failed', reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' },
      { kind: 'admission-reject', resource: 'memory', detail: 'MemoryPressure' },
      'pod-status',
    ],
    [
      'seed 000 (0x39): Pod was rejected on DiskPressure',
      {
        phase: 'Failed',
        reason: 'Evicted',
        message: 'Pod was rejected: The node had condition: [DiskPressure]. ',
      },
      { kind: 'admission-reject', resource: 'disk', detail: 'DiskPressure' },
      'pod-status',
    ],
    [
      'kubelet node-pressure eviction with the offending container',
      { phase: 'Failed', reason: 'Evicted', message: LOW_MEMORY },
      { kind: 'node-pressure-eviction', resource: 'memory', container: 'runner' },
      'pod-status',
    ],
    [
      'ephemeral-storage pressure',
      {
        phase: 'Failed',
        reason: 'Evicted',
        message: 'The node was low on resource: ephemeral-storage. ',
      },
      { kind: 'node-pressure-eviction', resource: 'disk', container: null },
      'pod-status',
    ],
    [
      'other admission reject',
      {
        phase: 'Failed',
        reason: 'OutOfcpu',
        message: "Pod was rejected: Node didn't have enough resource: cpu",
      },
      { kind: 'admission-reject', resource: null, detail: 'OutOfcpu' },
      'pod-status',
    ],
    [
      'graceful node shutdown',
      {
        phase: 'Failed',
        reason: 'Terminated',
        message: 'Pod was terminated in response to imminent node shutdown.',
      },
      { kind: 'kubelet-shutdown' },
      'pod-status',
    ],
    [
      'node shutdown admission',
      {
        phase: 'Failed',
        reason: 'NodeShutdown',
        message: 'Pod was rejected as the node is shutting down.',
      },
      { kind: 'kubelet-shutdown' },
      'pod-status',
    ],
    ...(
      [
        ['EvictionByEvictionAPI', { kind: 'api-eviction', by: 'unknown', karpenterReason: null }],
        ['DeletionByTaintManager', { kind: 'taint-manager' }],
        ['DeletionByPodGC', { kind: 'pod-gc' }],
        ['PreemptionByScheduler', { kind: 'preemption' }],
      ] as const
    ).map(([reason, cause]): [string, RawPodOptions, LossCause, string] => [
      `DisruptionTarget ${reason}`,
      {
        conditions: [
          {
            type: 'DisruptionTarget',
            status: 'True',
            reason,
            lastTransitionTime: new Date(T0).toISOString(),
          },
        ],
      },
      cause,
      'pod-condition',
    ]),
    [
      'TerminationByKubelet with a pressure message',
      {
        conditions: [
          {
            type: 'DisruptionTarget',
            status: 'True',
            reason: 'TerminationByKubelet',
            message: LOW_MEMORY,
          },
        ],
      },
      { kind: 'node-pressure-eviction', resource: 'memory', container: 'runner' },
      'pod-condition',
    ],
    [
      'kubelet eviction on a resource with no pressure condition of its own',
      { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: cpu. ' },
      { kind: 'node-pressure-eviction', resource: 'other', container: null },
      'pod-status',
    ],
    [
      'Evicted with a message that names no resource',
      { phase: 'Failed', reason: 'Evicted', message: 'Evicted for a reason this kubelet invented' },
      { kind: 'node-pressure-eviction', resource: 'other', container: null },
      'pod-status',
    ],
    [
      'TerminationByKubelet without a pressure message (a node shutdown)',
      {
        conditions: [
          {
            type: 'DisruptionTarget',
            status: 'True',
            reason: 'TerminationByKubelet',
            message: 'Pod was terminated in response to imminent node shutdown.',
          },
        ],
      },
      { kind: 'kubelet-shutdown' },
      'pod-condition',
    ],
    [
      'OOMKilled runner container',
      {
        phase: 'Failed',
        containerStatuses: [
          { name: 'runner', state: { terminated: { reason: 'OOMKilled', exitCode: 137 } } },
        ],
      },
      { kind: 'oom-killed', container: 'runner' },
      'container-status',
    ],
  ])('%s', (_, options, cause, source) => {
    const loss = classifyPod(pod(options));
    expect(loss?.cause).toEqual(cause);
    expect(loss?.signal.source).toBe(source);
    expect(loss?.signal.detail.length).toBeGreaterThan(0);
  });

  it.each<[string, RawPodOptions]>([
    ['a running pod', {}],
    ['a succeeded pod', { phase: 'Succeeded' }],
    [
      'a failed pod with exit 1',
      {
        phase: 'Failed',
        containerStatuses: [
          { name: 'runner', state: { terminated: { reason: 'Error', exitCode: 1 } } },
        ],
      },
    ],
    [
      'a failed pod whose reason is no loss (its deadline passed)',
      {
        phase: 'Failed',
        reason: 'DeadlineExceeded',
        message: 'Pod was active on the node longer than the specified deadline',
      },
    ],
    [
      'a DisruptionTarget of a reason Kubernetes may add later',
      { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'SomethingNew' }] },
    ],
    [
      'a DisruptionTarget False',
      {
        conditions: [
          { type: 'DisruptionTarget', status: 'False', reason: 'EvictionByEvictionAPI' },
        ],
      },
    ],
  ])('%s is not a loss', (_, options) => {
    expect(classifyPod(pod(options))).toBeNull();
  });
});

describe('classifyEphemeralRunner', () => {
  it.each([
    ['InvalidPod', 'InvalidPod'],
    ['TooManyPodFailures (ARC ≤ 0.11)', 'TooManyPodFailures'],
  ])('phase Failed %s holds a slot', (_, reason) => {
    const er = parseEphemeralRunner(rawEr({ phase: 'Failed', reason }), CLUSTER);
    expect(er.ok && classifyEphemeralRunner(er.value)?.cause).toEqual({
      kind: 'runner-failed',
      reason,
    });
  });
  it('a Running runner is fine', () => {
    const er = parseEphemeralRunner(rawEr({ phase: 'Running' }), CLUSTER);
    expect(er.ok && classifyEphemeralRunner(er.value)).toBeNull();
  });
});

describe('classifyEvent', () => {
  it.each<[string, Parameters<typeof exportedEvent>[0], LossCause]>([
    [
      'seed 000: kubelet Evicted, MemoryPressure',
      { reason: 'Evicted', message: 'The node had condition: [MemoryPressure].' },
      { kind: 'admission-reject', resource: 'memory', detail: 'MemoryPressure' },
    ],
    [
      'kubelet Evicted with offending_containers annotations',
      {
        reason: 'Evicted',
        message: LOW_MEMORY,
        annotations: {
          offending_containers: 'dind',
          offending_containers_usage: '3Gi',
          starved_resource: 'memory',
        },
      },
      { kind: 'node-pressure-eviction', resource: 'memory', container: 'dind' },
    ],
    ...(
      [
        ['Underutilized', 'consolidation'],
        ['Consolidation/Delete', 'consolidation'],
        ['Empty', 'consolidation'],
        ['Drifted', 'drift'],
        ['Expired', 'expiry'],
        ['Forceful Termination', 'forceful'],
      ] as const
    ).map(([reason, karpenterReason]): [string, Parameters<typeof exportedEvent>[0], LossCause] => [
      `Karpenter "Evicted pod: ${reason}"`,
      { reason: 'Evicted', message: `Evicted pod: ${reason}`, component: 'karpenter' },
      { kind: 'api-eviction', by: 'karpenter', karpenterReason },
    ]),
    [
      'Karpenter Disrupted',
      {
        reason: 'Disrupted',
        message: 'Deleting the pod to accommodate the terminationTime',
        component: 'karpenter',
      },
      { kind: 'api-eviction', by: 'karpenter', karpenterReason: 'forceful' },
    ],
    [
      'kubelet Preempting for a critical pod',
      {
        reason: 'Preempting',
        message: 'Preempted in order to admit critical pod',
        component: 'kubelet',
      },
      { kind: 'preemption' },
    ],
    [
      'scheduler Preempted',
      {
        reason: 'Preempted',
        message: 'Preempted by pod 1234 on node n1',
        component: 'default-scheduler',
      },
      { kind: 'preemption' },
    ],
    [
      'kubelet admission OutOfmemory',
      {
        reason: 'OutOfmemory',
        message: "Node didn't have enough resource: memory, requested: 8Gi",
        component: 'kubelet',
      },
      { kind: 'admission-reject', resource: null, detail: 'OutOfmemory' },
    ],
    [
      'kubelet NodeShutdown',
      {
        reason: 'NodeShutdown',
        message: 'Pod was rejected as the node is shutting down.',
        component: 'kubelet',
      },
      { kind: 'kubelet-shutdown' },
    ],
    [
      'taint manager',
      {
        reason: 'TaintManagerEviction',
        message: 'Marking for deletion Pod arc-runners/x',
        component: 'taint-eviction-controller',
      },
      { kind: 'taint-manager' },
    ],
  ])('%s', (_, raw, cause) => {
    const c = classifyEvent(event(raw));
    expect(c.kind === 'loss' && c.loss.cause).toEqual(cause);
    expect(c.kind === 'loss' && c.loss.signal.source).toBe('pod-event');
    expect(c.kind === 'loss' && c.loss.scaleSet).toBe('arc-runner-set');
  });

  it.each([
    [
      'DisruptionTerminating',
      'Disrupting Node: Underutilized',
      'karpenter',
      'karpenter-disruption',
    ],
    [
      'DisruptionTerminating',
      'Disrupting Node: Consolidation/Delete',
      'karpenter',
      'karpenter-disruption',
    ],
    [
      'SpotInterrupted',
      'Spot interruption warning was triggered',
      'karpenter',
      'spot-interruption-warning',
    ],
    [
      'SpotInterruption',
      'Spot ITN received',
      'aws-node-termination-handler',
      'spot-interruption-warning',
    ],
    [
      'CordonAndDrain',
      'Node successfully cordoned and drained',
      'aws-node-termination-handler',
      'nth-drain',
    ],
    ['NodeNotReady', 'Node n1 status is now: NodeNotReady', 'node-controller', 'node-not-ready'],
  ])('node event %s (%s) → %s', (reason, message, component, kind) => {
    const c = classifyEvent(event({ reason, message, component, kind: 'Node', name: 'n1' }));
    expect(c.kind === 'node-signal' && c.signal).toMatchObject({
      kind,
      nodeName: 'n1',
      cluster: CLUSTER,
    });
  });

  it.each([
    ['Scheduled', 'Successfully assigned arc-runners/x to n1', 'Pod'],
    ['Killing', 'Stopping container runner', 'Pod'],
    ['RebalanceRecommendation', 'rebalance', 'Node'],
    ['Evicted', 'x', 'NodeClaim'],
    // Not terminal: the node may come back; the node's own status decides (correlate).
    ['NodeNotReady', 'Node is not ready', 'Pod'],
  ])('ignores %s on a %s', (reason, message, kind) => {
    expect(
      classifyEvent(event({ reason, message, kind, component: 'aws-node-termination-handler' }))
        .kind,
    ).toBe('ignored');
  });

  it('ignores a DisruptionTerminating whose message lacks the Disrupting Node prefix', () => {
    const c = classifyEvent(
      event({
        reason: 'DisruptionTerminating',
        message: 'Terminating something else',
        component: 'karpenter',
        kind: 'Node',
        name: 'n1',
      }),
    );
    expect(c).toEqual({
      kind: 'ignored',
      reason: 'DisruptionTerminating without the Node prefix',
    });
  });

  it('a pod-level SpotInterrupted is a runner warning', () => {
    const c = classifyEvent(
      event({
        reason: 'SpotInterrupted',
        message: 'Spot interruption warning was triggered',
        component: 'karpenter',
      }),
    );
    expect(c.kind === 'runner-warning' && c.warning.kind).toBe('spot-interruption-warning');
  });
});

describe('classifyNode and classifyEc2Event', () => {
  const node = (o: Parameters<typeof rawNode>[0]) => {
    const r = parseNode(rawNode(o), CLUSTER);
    if (!r.ok) throw new Error(r.reason);
    return r.value;
  };
  it.each([
    [{ ready: 'Unknown' }, ['node-not-ready']],
    [{ ready: 'False' }, ['node-not-ready']],
    [{ deletionTimestamp: new Date(T0).toISOString() }, ['node-gone']],
    [
      { taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] },
      ['karpenter-disruption'],
    ],
    [
      { taints: [{ key: 'aws-node-termination-handler/spot-itn', effect: 'NoSchedule' }] },
      ['spot-interruption-warning'],
    ],
    [
      {
        taints: [
          { key: 'aws-node-termination-handler/asg-lifecycle-termination', effect: 'NoSchedule' },
        ],
      },
      ['nth-drain'],
    ],
    [
      { taints: [{ key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute' }] },
      ['node-gone'],
    ],
    [
      { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] },
      ['node-not-ready'],
    ],
    [
      {
        taints: [
          { key: 'aws-node-termination-handler/rebalance-recommendation', effect: 'NoSchedule' },
        ],
      },
      [],
    ],
    [{ taints: [{ key: 'example.com/gpu', effect: 'NoSchedule' }] }, []],
    [{}, []],
  ])('%j → %j', (o, kinds) => {
    expect(classifyNode(node(o), T0).map((s) => s.kind)).toEqual(kinds);
  });

  it.each([
    ['shutting-down', 'instance-terminating'],
    ['terminated', 'node-gone'],
    ['running', null],
    ['stopping', 'instance-terminating'],
    ['stopped', 'node-gone'],
  ])('state %s → %s', (state, kind) => {
    const s = classifyEc2Event({
      kind: 'ec2-instance-state-change',
      instanceId: 'i-1',
      state,
      region: null,
      account: null,
      at: T0,
    });
    expect(s?.kind ?? null).toBe(kind);
  });
});

describe('attributeEviction', () => {
  const evicted = classifyPod(
    pod({
      conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI' }],
    }),
  );
  const sig = (kind: 'spot-interruption-warning' | 'karpenter-disruption' | 'nth-drain') => ({
    cluster: CLUSTER,
    nodeName: 'n1',
    instanceId: null,
    kind,
    signal: { source: 'node-event' as const, detail: kind },
    at: T0,
  });
  it('a Karpenter eviction on a node with a spot warning is a spot interruption', () => {
    const k = classifyEvent(
      event({
        reason: 'Evicted',
        message: 'Evicted pod: Forceful Termination',
        component: 'karpenter',
      }),
    );
    if (k.kind !== 'loss') throw new Error('expected a loss');
    const l = attributeEviction(k.loss, [sig('spot-interruption-warning')]);
    expect(l.cause).toEqual({
      kind: 'api-eviction',
      by: 'spot-interruption',
      karpenterReason: 'forceful',
    });
    expect(attributeEviction(k.loss, [sig('karpenter-disruption')]).cause).toEqual(k.loss.cause);
  });

  it.each([
    [[sig('karpenter-disruption')], 'karpenter'],
    [[sig('nth-drain')], 'node-termination-handler'],
    [[sig('nth-drain'), sig('spot-interruption-warning')], 'spot-interruption'],
    [[], 'unknown'],
  ])('%# names the evictor %s', (signals, by) => {
    if (!evicted) throw new Error('expected a loss');
    const l = attributeEviction(evicted, signals);
    expect(l.cause.kind === 'api-eviction' && l.cause.by).toBe(by);
  });
});

describe('isRunnerPod / isArcOwned', () => {
  const meta = (labels: Record<string, string>, owners: object[]) => {
    const r = parsePod(rawPod({ labels, ownerReferences: owners }), CLUSTER);
    if (!r.ok) throw new Error(r.reason);
    return r.value.metadata;
  };
  const name = 'arc-runner-set-2fh9q-runner-tkvlz';
  const noRunnerLabel = without(runnerLabels(), 'actions-ephemeral-runner');
  it.each([
    ['all labels and the ER owner', runnerLabels(), [erOwner(name)], true],
    ['no actions-ephemeral-runner label', noRunnerLabel, [erOwner(name)], false],
    [
      'component runner-set',
      { ...runnerLabels(), 'app.kubernetes.io/component': 'runner-set' },
      [erOwner(name)],
      false,
    ],
    [
      'owned by a ReplicaSet',
      runnerLabels(),
      [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name, uid: 'u' }],
      false,
    ],
    ['owned by an ER of another name', runnerLabels(), [erOwner('other')], false],
    ['no owner', runnerLabels(), [], false],
  ])('%s → %s', (_, labels, owners, expected) => {
    expect(isRunnerPod(meta(labels, owners))).toBe(expected);
  });

  it.each([
    ['EphemeralRunnerSet', true],
    ['Deployment', false],
  ])('an EphemeralRunner owned by a %s → %s', (ownerKind, expected) => {
    const er = parseEphemeralRunner(rawEr({ ownerKind }), CLUSTER);
    expect(er.ok && isArcOwned(er.value.metadata)).toBe(expected);
  });
});

describe('annotations', () => {
  it.each([
    [LOST_ANNOTATION, 'lost-communication'],
    [
      'The self-hosted runner lost communication with the server. Verify the machine is running.',
      'lost-communication',
    ],
    [SHUTDOWN_ANNOTATION, 'shutdown-signal'],
    [
      "Operating system is shutting down for computer 'arc-runner-set-2fh9q-runner-tkvlz'",
      'os-shutdown',
    ],
    ['Process completed with exit code 1.', null],
    ['The operation was canceled.', null],
    ['The job running on runner x has exceeded the maximum execution time of 360 minutes.', null],
  ])('%s → %s', (message, signal) => {
    expect(lossSignalOf(message)).toBe(signal);
  });

  it('counts only failure-level annotations', () => {
    expect(
      findRunnerLoss([{ annotation_level: 'warning', message: SHUTDOWN_ANNOTATION }]),
    ).toBeNull();
    expect(
      findRunnerLoss([
        { annotation_level: 'failure', message: 'Process completed with exit code 1.' },
        { annotation_level: 'failure', message: SHUTDOWN_ANNOTATION, path: '.github' },
      ])?.signal,
    ).toBe('shutdown-signal');
  });
});

describe('classifyEc2Event: spot warning', () => {
  it('names the instance, not a node (correlate maps it through providerID)', () => {
    const s = classifyEc2Event({
      kind: 'ec2-spot-interruption-warning',
      instanceId: 'i-0abc',
      instanceAction: 'terminate',
      region: 'eu-west-1',
      account: null,
      at: T0,
    });
    expect(s).toMatchObject({
      kind: 'spot-interruption-warning',
      instanceId: 'i-0abc',
      nodeName: null,
      cluster: null,
      at: T0,
    });
    expect(s?.signal).toEqual({
      source: 'ec2-event',
      detail: 'spot interruption warning (terminate)',
    });
  });
});
