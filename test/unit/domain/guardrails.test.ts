import { correlate } from '../../../functions/domain/correlate/correlate.js';
import { newContext, type Proposal } from '../../../functions/domain/decide/context.js';
import { applyGuardrails } from '../../../functions/domain/decide/guardrails.js';
import type { ActionScope } from '../../../functions/domain/model/action.js';
import type { Facts } from '../../../functions/domain/model/facts.js';
import { DEFAULT_POLICY } from '../../../functions/domain/policy/policy.js';
import { er, facts, node, pod, record } from './builders.js';
import { CLUSTER, NS, SCALE_SET, T0 } from './fixtures.js';

const NAME = 'arc-runner-set-2fh9q-runner-tkvlz';
const scope: ActionScope = {
  cluster: CLUSTER,
  namespace: NS,
  scaleSet: SCALE_SET,
  repo: 'acme/app',
  runnerName: NAME,
  jobUrl: null,
};
const runner = { cluster: CLUSTER, namespace: NS, name: NAME };
const deleteEr = (uid = `uid-er-${NAME}`): Proposal => ({
  rule: 'freePoisonedSlot',
  key: `delete-ephemeral-runner:${uid}`,
  target: { kind: 'delete-ephemeral-runner', ...runner, uid },
  scope,
  cause: null,
  signal: null,
  reason: 'test',
  budgetKeys: [],
});
const rerun = (key: string, budgetKeys: string[]): Proposal => ({
  rule: 'rerunKilledJob',
  key,
  target: {
    kind: 'rerun-job',
    repo: 'acme/app',
    installationId: 1,
    runId: 1,
    runAttempt: 1,
    jobId: 1,
  },
  scope,
  cause: null,
  signal: null,
  reason: 'test',
  budgetKeys,
});
const live = facts({ pods: [pod()], ephemeralRunners: [er()], nodes: [node()] });

function guard(
  f: Facts,
  proposals: Proposal[],
  setUp: (ctx: ReturnType<typeof newContext>) => void = () => {},
) {
  const ctx = newContext(f, DEFAULT_POLICY, T0, correlate(f, T0));
  ctx.proposals.push(...proposals);
  setUp(ctx);
  const d = applyGuardrails(ctx);
  return { keys: d.actions.map((a) => a.key), why: d.held.map((h) => h.why), wakeAt: d.wakeAt };
}

describe('applyGuardrails: what every proposal passes', () => {
  it('one action per key, and a key already claimed or done is no action and no hold', () => {
    const claimed = {
      ...live,
      actions: [record({ key: 'rerun:a', kind: 'rerun-job', outcome: 'claimed' })],
    };
    expect(guard(claimed, [rerun('rerun:a', []), deleteEr(), deleteEr()])).toEqual({
      keys: [deleteEr().key],
      why: [],
      wakeAt: null,
    });
    const failed = {
      ...live,
      actions: [record({ key: 'rerun:a', kind: 'rerun-job', outcome: 'failed' })],
    };
    expect(guard(failed, [rerun('rerun:a', [])]).keys).toEqual(['rerun:a']);
  });

  it('holds an action with no cluster', () => {
    expect(guard(live, [{ ...deleteEr(), scope: { ...scope, cluster: null } }]).why).toEqual([
      'no cluster known for this action',
    ]);
  });

  it('holds a Kubernetes action whose target is not an ARC runner or is no longer the same object', () => {
    const foreign = facts({ ephemeralRunners: [er({ ownerKind: 'Deployment' })] });
    expect(guard(foreign, [deleteEr()]).why).toEqual([
      'not an ARC runner (labels/owner references)',
    ]);
    expect(guard(live, [deleteEr('uid-er-old')]).why).toEqual(['EphemeralRunner uid changed']);
    const deletePod = (uid: string, force: boolean): Proposal => ({
      ...deleteEr(),
      key: `delete-pod:${uid}:${force}`,
      target: { kind: 'delete-pod', ...runner, uid, force },
    });
    expect(guard(live, [deletePod('uid-pod-old', false)]).why).toEqual(['pod uid changed']);
    expect(guard(live, [deletePod(`uid-pod-${NAME}`, true)]).why).toEqual([
      'force delete only for a pod on a NotReady or deleted node',
    ]);
    const downNode = { ...live, nodes: [node({ ready: 'Unknown' })] };
    expect(guard(downNode, [deletePod(`uid-pod-${NAME}`, true)]).keys).toHaveLength(1);
  });

  it('marks a runner at risk that only the store remembers on a warned node', () => {
    const remembered = facts({
      nodes: [node({ taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] })],
      runnersOnNodes: [
        {
          ...runner,
          nodeName: 'pool-github-runners-3-ogny9',
          podUid: `uid-pod-${NAME}`,
          ephemeralRunnerUid: `uid-er-${NAME}`,
          scaleSet: SCALE_SET,
          runnerId: 42,
          seenAt: T0,
        },
      ],
    });
    const markAtRisk: Proposal = {
      ...deleteEr(),
      rule: 'warnedNode',
      key: 'mark-at-risk:x',
      target: {
        kind: 'mark-at-risk',
        cluster: CLUSTER,
        namespace: NS,
        runnerName: NAME,
        warning: 'karpenter-disruption',
      },
    };
    expect(guard(remembered, [markAtRisk]).keys).toEqual(['mark-at-risk:x']);
    expect(guard(facts(), [markAtRisk]).why).toEqual([
      'not an ARC runner (labels/owner references)',
    ]);
  });

  it("charges a rule's budget once per key, across the decision and what is already spent", () => {
    expect(
      guard(live, [rerun('rerun:1', ['k']), rerun('rerun:2', ['k']), rerun('rerun:3', ['k'])]),
    ).toEqual({
      keys: ['rerun:1', 'rerun:2'],
      why: ['re-run budget of 2 exhausted for k'],
      wakeAt: null,
    });
    const spent = {
      ...live,
      actions: [
        record({ key: 'old:1', kind: 'rerun-job', budgetKeys: ['k'] }),
        record({
          key: 'old:2',
          kind: 'rerun-job',
          budgetKeys: ['k'],
          dryRun: true,
          outcome: 'dry-run',
        }),
      ],
    };
    expect(guard(spent, [rerun('rerun:1', ['k']), rerun('rerun:2', ['k'])]).keys).toEqual([
      'rerun:1',
    ]);
  });

  it('holds destructive actions where a breaker is open until it closes, and lets the rest through', () => {
    const trip = {
      cluster: CLUSTER,
      scaleSet: null,
      losses: 12,
      threshold: 10,
      windowSeconds: 900,
      closesAt: T0 + 600_000,
    };
    const report: Proposal = {
      ...deleteEr(),
      rule: 'starvingQueue',
      key: 'report-starvation:x',
      target: {
        kind: 'report-starvation',
        scaleSet: SCALE_SET,
        repo: 'acme/app',
        jobId: 1,
        queuedSince: T0,
      },
    };
    const d = guard(live, [deleteEr(), report], (ctx) => ctx.trips.push(trip));
    expect(d).toEqual({
      keys: ['report-starvation:x'],
      why: [`circuit breaker open: 12 losses in 900 s on ${CLUSTER}`],
      wakeAt: T0 + 600_000,
    });
  });

  it('holds what the policy does not allow, or a rule switched off', () => {
    const elsewhere = { ...deleteEr(), scope: { ...scope, cluster: 'unknown-cluster' } };
    const policy = { ...DEFAULT_POLICY, allow: { ...DEFAULT_POLICY.allow, clusters: [CLUSTER] } };
    const ctx = newContext(live, policy, T0, correlate(live, T0));
    ctx.proposals.push(elsewhere);
    expect(applyGuardrails(ctx).held.map((h) => h.why)).toEqual([
      'cluster unknown-cluster is not in allow.clusters',
    ]);
    const off = {
      ...DEFAULT_POLICY,
      rules: {
        ...DEFAULT_POLICY.rules,
        freePoisonedSlot: { ...DEFAULT_POLICY.rules.freePoisonedSlot, enabled: false },
      },
    };
    const offCtx = newContext(live, off, T0, correlate(live, T0));
    offCtx.proposals.push(deleteEr());
    expect(applyGuardrails(offCtx).held.map((h) => h.why)).toEqual([
      'rule rule-1-free-poisoned-slot is off',
    ]);
  });
});
