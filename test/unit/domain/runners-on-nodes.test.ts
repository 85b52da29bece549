import {
  rememberedRunners,
  signalsOnNode,
} from '../../../functions/domain/correlate/runners-on-nodes.js';
import { decide } from '../../../functions/domain/decide/decide.js';
import type { Facts, RunnerOnNode } from '../../../functions/domain/model/facts.js';
import { DEFAULT_POLICY, parsePolicy } from '../../../functions/domain/policy/policy.js';
import { er, facts, job, node, pod, unwrap } from './builders.js';
import { CLUSTER, NS, SCALE_SET, T0 } from './fixtures.js';

const NAME = 'arc-runner-set-2fh9q-runner-tkvlz';
const NODE = 'pool-github-runners-3-ogny9';
const onNode: RunnerOnNode = {
  cluster: CLUSTER,
  namespace: NS,
  name: NAME,
  nodeName: NODE,
  podUid: `uid-pod-${NAME}`,
  ephemeralRunnerUid: `uid-er-${NAME}`,
  scaleSet: SCALE_SET,
  runnerId: 42,
  seenAt: T0,
};
const disrupted = node({ taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] });
const inProgress = job({ jobId: 1, status: 'in_progress', conclusion: null, completedAt: null });

describe('rememberedRunners: runners on signalled nodes known from the store only', () => {
  it('a runner on a warned node, with its jobs in progress by runner id', () => {
    const [r, ...rest] = rememberedRunners(
      facts({
        nodes: [disrupted],
        runnersOnNodes: [onNode],
        jobs: [inProgress, job({ jobId: 2 })],
      }),
      T0,
    );
    expect(rest).toEqual([]);
    expect(r?.nodeSignals.map((s) => s.kind)).toEqual(['karpenter-disruption']);
    expect(r?.jobsInProgress.map((j) => j.job.jobId)).toEqual([1]);
  });

  it('by name and scale set where neither side has a runner id yet', () => {
    const noId = { ...onNode, runnerId: null };
    const unnamedJob = job({ jobId: 3, status: 'in_progress', runnerId: null });
    const otherSet = job({ jobId: 4, status: 'in_progress', runnerId: null, labels: ['gpu'] });
    const [r] = rememberedRunners(
      facts({ nodes: [disrupted], runnersOnNodes: [noId], jobs: [unnamedJob, otherSet] }),
      T0,
    );
    expect(r?.jobsInProgress.map((j) => j.job.jobId)).toEqual([3]);
    const [noSet] = rememberedRunners(
      facts({
        nodes: [disrupted],
        runnersOnNodes: [{ ...noId, scaleSet: null }],
        jobs: [unnamedJob],
      }),
      T0,
    );
    expect(noSet?.jobsInProgress).toEqual([]);
  });

  it('none when its pod or EphemeralRunner was read, or its node has no current signal', () => {
    expect(
      rememberedRunners(facts({ nodes: [disrupted], pods: [pod()], runnersOnNodes: [onNode] }), T0),
    ).toEqual([]);
    expect(
      rememberedRunners(
        facts({ nodes: [disrupted], ephemeralRunners: [er()], runnersOnNodes: [onNode] }),
        T0,
      ),
    ).toEqual([]);
    expect(rememberedRunners(facts({ nodes: [node()], runnersOnNodes: [onNode] }), T0)).toEqual([]);
  });

  it("signalsOnNode: a node's own state and stored signals by name or instance id, in its cluster", () => {
    const stored = [
      {
        cluster: null,
        nodeName: null,
        instanceId: 'i-0123456789abcdef0',
        kind: 'spot-interruption-warning' as const,
        signal: { source: 'ec2-event' as const, detail: 'spot' },
        at: T0,
      },
      {
        cluster: 'other',
        nodeName: NODE,
        instanceId: null,
        kind: 'nth-drain' as const,
        signal: { source: 'node-event' as const, detail: 'drain' },
        at: T0,
      },
    ];
    const kinds = signalsOnNode({ nodeSignals: stored }, CLUSTER, NODE, disrupted, T0).map(
      (s) => s.kind,
    );
    expect(kinds).toEqual(['spot-interruption-warning', 'karpenter-disruption']);
    expect(signalsOnNode({ nodeSignals: stored }, CLUSTER, NODE, null, T0)).toEqual([]);
  });
});

describe('rule 6 for a remembered runner', () => {
  const remembered = (o: Partial<Facts> = {}) =>
    facts({ nodes: [disrupted], runnersOnNodes: [onNode], ...o });

  it('a busy one is marked at risk from what the sweep proved', () => {
    const d = decide(remembered({ jobs: [inProgress] }), DEFAULT_POLICY, T0);
    expect(d.actions.map((a) => [a.target.kind, a.key])).toEqual([
      ['mark-at-risk', `mark-at-risk:${CLUSTER}:${NS}:${NAME}:uid-pod-${NAME}`],
    ]);
  });

  it('an idle one, or one on a node already down, has its live objects read first', () => {
    const objects = { kind: 'runner-objects', cluster: CLUSTER, namespace: NS, name: NAME };
    expect(decide(remembered(), DEFAULT_POLICY, T0).needs).toEqual([objects]);
    const down = remembered({ nodes: [node({ ready: 'Unknown' })] });
    expect(decide(down, DEFAULT_POLICY, T0)).toMatchObject({ actions: [], needs: [objects] });
  });

  it('nothing when rule 6 is off, or an idle runner is not to be replaced', () => {
    const off = unwrap(parsePolicy('rules: { warnedNode: { enabled: false } }'));
    expect(decide(remembered({ jobs: [inProgress] }), off, T0)).toMatchObject({
      actions: [],
      needs: [],
    });
    const keepIdle = unwrap(parsePolicy('rules: { warnedNode: { replaceIdle: false } }'));
    expect(decide(remembered(), keepIdle, T0)).toMatchObject({ actions: [], needs: [] });
  });
});
