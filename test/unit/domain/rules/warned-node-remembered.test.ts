import { decide } from '../../../../functions/domain/decide/decide.js';
import type {
  ActionRecord,
  Facts,
  RunnerOnNode,
} from '../../../../functions/domain/model/facts.js';
import { idempotencyKey } from '../../../../functions/domain/model/idempotency-key.js';
import type { NodeSignal } from '../../../../functions/domain/model/loss.js';
import { DEFAULT_POLICY, parsePolicy } from '../../../../functions/domain/policy/policy.js';
import { er, facts, job, pod, unwrap } from '../builders.js';
import { CLUSTER, NS, SCALE_SET, T0 } from '../fixtures.js';

/**
 * A node signal is decided from the runner pods the sweep proved bound to the node: a busy one is
 * marked at risk from memory; anything destructive first asks for the runner's live objects.
 */
const NAME = 'arc-runner-set-2fh9q-runner-tkvlz';
const NODE = 'ip-10-0-1-17.eu-west-1.compute.internal';

const onNode = (o: Partial<RunnerOnNode> = {}): RunnerOnNode => ({
  cluster: CLUSTER,
  namespace: NS,
  name: NAME,
  nodeName: NODE,
  podUid: 'pod-uid-1',
  ephemeralRunnerUid: 'er-uid-1',
  scaleSet: SCALE_SET,
  runnerId: 42,
  seenAt: T0 - 600_000,
  ...o,
});

const signal = (kind: NodeSignal['kind'], at = T0 - 1_000): NodeSignal => ({
  cluster: CLUSTER,
  nodeName: NODE,
  instanceId: null,
  kind,
  signal: { source: 'ec2-event', detail: kind },
  at,
});

const running = (o = {}) =>
  job({ status: 'in_progress', conclusion: null, completedAt: null, ...o });

const remembered = (o: Partial<Facts>): Facts =>
  facts({ runnersOnNodes: [onNode()], nodeSignals: [signal('spot-interruption-warning')], ...o });

describe('rule 6 over runners known from the store only', () => {
  it('marks a busy runner on a warned node at risk, reading nothing, keyed by its pod uid', () => {
    const d = decide(remembered({ jobs: [running()] }), DEFAULT_POLICY, T0);
    expect(d.needs).toEqual([]);
    expect(d.actions).toHaveLength(1);
    expect(d.actions[0]?.target).toMatchObject({
      kind: 'mark-at-risk',
      cluster: CLUSTER,
      namespace: NS,
      runnerName: NAME,
      warning: 'spot-interruption-warning',
    });
    expect(d.actions[0]?.key).toContain('pod-uid-1');
  });

  it.each([
    ['deleted', 'succeeded', false],
    ['whose delete is claimed', 'claimed', false],
    ['that dry run would delete', 'dry-run', true],
  ] as const)(
    'does not mark a runner whose EphemeralRunner runner-medic %s: it is being replaced',
    (_, outcome, dryRun) => {
      const freed: ActionRecord = {
        key: idempotencyKey('delete-ephemeral-runner', CLUSTER, NS, NAME, 'er-uid-1'),
        kind: 'delete-ephemeral-runner',
        rule: 'rule-1-free-poisoned-slot',
        claimedAt: T0 - 1_500,
        outcome,
        finishedAt: T0 - 1_400,
        dryRun,
        budgetKeys: [],
        jobIds: [],
      };
      const d = decide(remembered({ jobs: [running()], actions: [freed] }), DEFAULT_POLICY, T0);
      expect(d.actions).toEqual([]);
      expect(d.needs).toEqual([]);
      // A delete that was refused for good, or failed, left it running its job: marked as ever.
      for (const notDone of ['gave-up', 'failed'] as const) {
        const refused = { ...freed, outcome: notDone };
        const again = decide(
          remembered({ jobs: [running()], actions: [refused] }),
          DEFAULT_POLICY,
          T0,
        );
        expect(again.actions.map((a) => a.target.kind)).toEqual(['mark-at-risk']);
      }
    },
  );

  it('joins the job by GitHub runner id, not by name, when both sides have one', () => {
    const d = decide(remembered({ jobs: [running({ runnerId: 7 })] }), DEFAULT_POLICY, T0);
    expect(d.actions).toEqual([]);
    // Not proven busy: replacing it early would be destructive, so its live objects are read.
    expect(d.needs).toEqual([
      { kind: 'runner-objects', cluster: CLUSTER, namespace: NS, name: NAME },
    ]);
  });

  it('joins by name and scale-set label only when neither side has a runner id yet', () => {
    const f = remembered({
      runnersOnNodes: [onNode({ runnerId: null })],
      jobs: [running({ runnerId: null })],
    });
    expect(decide(f, DEFAULT_POLICY, T0).actions.map((a) => a.target.kind)).toEqual([
      'mark-at-risk',
    ]);
    const otherSet = remembered({
      runnersOnNodes: [onNode({ runnerId: null })],
      jobs: [running({ runnerId: null, labels: ['another-set'] })],
    });
    expect(decide(otherSet, DEFAULT_POLICY, T0).actions).toEqual([]);
  });

  it('asks for an idle runner’s live objects only when the policy would replace it', () => {
    const idle = remembered({ jobs: [] });
    expect(decide(idle, DEFAULT_POLICY, T0).needs).toHaveLength(1);
    const keep = unwrap(parsePolicy('rules: { warnedNode: { replaceIdle: false } }'));
    expect(decide(idle, keep, T0).needs).toEqual([]);
    const off = unwrap(parsePolicy('rules: { warnedNode: { enabled: false } }'));
    expect(decide(remembered({ jobs: [running()] }), off, T0)).toMatchObject({
      actions: [],
      needs: [],
    });
  });

  it('asks for the live objects of every runner on a node that is already down', () => {
    const d = decide(
      remembered({ jobs: [running()], nodeSignals: [signal('node-not-ready')] }),
      DEFAULT_POLICY,
      T0,
    );
    expect(d.actions).toEqual([]);
    expect(d.needs).toEqual([
      { kind: 'runner-objects', cluster: CLUSTER, namespace: NS, name: NAME },
    ]);
  });

  it('ignores a remembered runner whose objects were read: the live objects outrank memory', () => {
    const live = { pods: [pod({ nodeName: NODE })], ephemeralRunners: [er()] };
    const d = decide(remembered({ jobs: [running()], ...live }), DEFAULT_POLICY, T0);
    expect(d.needs).toEqual([]);
    // The live view decides, keyed by the live pod's uid: one mark, not a second from memory.
    const marks = d.actions.filter((a) => a.target.kind === 'mark-at-risk');
    expect(marks).toHaveLength(1);
    expect(marks[0]?.key).toContain(`uid-pod-${NAME}`);
  });

  it('does nothing for a runner on a node without a current signal', () => {
    const stale = remembered({
      jobs: [running()],
      nodeSignals: [signal('spot-interruption-warning', T0 - 3600_000)],
    });
    expect(decide(stale, DEFAULT_POLICY, T0)).toMatchObject({ actions: [], needs: [] });
  });
});
