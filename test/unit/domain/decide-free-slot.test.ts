import { decide } from '../../../functions/domain/decide/decide.js';
import type { Facts } from '../../../functions/domain/model/facts.js';
import {
  DEFAULT_POLICY,
  parsePolicy,
  type Policy,
} from '../../../functions/domain/policy/policy.js';
import { er, facts, job, node, pod, unwrap, withEvent } from './builders.js';
import { CLUSTER, NS, T0, iso, runnerLabels } from './fixtures.js';

const NAME = 'arc-runner-set-2fh9q-runner-tkvlz';
const evictedPod = (version = '0.13.1') =>
  pod({
    phase: 'Failed',
    reason: 'Evicted',
    message: 'The node had condition: [MemoryPressure]. ',
    conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: iso(T0) }],
    version,
  });
const policy = (yaml: string): Policy => unwrap(parsePolicy(yaml));
const kinds = (f: Facts, now: number, p: Policy = DEFAULT_POLICY) =>
  decide(f, p, now).actions.map((a) => `${a.target.kind}${a.dryRun ? ' (dry-run)' : ''}`);

describe('rule 1: free a poisoned slot', () => {
  it.each<[string, Facts, number, string[]]>([
    [
      'new ARC, within the grace period: wait for ARC',
      facts({ pods: [evictedPod()], ephemeralRunners: [er({ version: '0.13.1' })] }),
      T0 + 60_000,
      [],
    ],
    [
      'new ARC, after the grace period',
      facts({ pods: [evictedPod()], ephemeralRunners: [er({ version: '0.13.1' })] }),
      T0 + 181_000,
      ['delete-ephemeral-runner'],
    ],
    [
      'old ARC (version label 0.8.2): at once',
      facts({ pods: [evictedPod('0.8.2')], ephemeralRunners: [er({ version: '0.8.2' })] }),
      T0,
      ['delete-ephemeral-runner'],
    ],
    [
      'old ARC by its bool `failures` shape, no version label: at once',
      facts({
        pods: [evictedPod('')],
        ephemeralRunners: [er({ version: '', failures: { 'uid-a': true } })],
      }),
      T0,
      ['delete-ephemeral-runner'],
    ],
    [
      'new ARC by its time `failures` shape: waits',
      facts({
        pods: [evictedPod('')],
        ephemeralRunners: [er({ version: '', failures: { 'uid-a': iso(T0) } })],
      }),
      T0,
      [],
    ],
    [
      'EphemeralRunner phase Failed (InvalidPod), no pod',
      facts({ ephemeralRunners: [er({ phase: 'Failed', reason: 'InvalidPod' })] }),
      T0 + 181_000,
      ['delete-ephemeral-runner'],
    ],
    ['a healthy runner', facts({ pods: [pod()], ephemeralRunners: [er()] }), T0 + 3_600_000, []],
    [
      'pod missing (NotFound) past grace',
      facts({
        ephemeralRunners: [er()],
        missingPods: [{ cluster: CLUSTER, namespace: NS, name: NAME, since: T0 }],
      }),
      T0 + 181_000,
      ['delete-ephemeral-runner'],
    ],
    [
      'pod Running on a NotReady node past grace: delete ER and force-delete the pod',
      facts({ pods: [pod()], ephemeralRunners: [er()], nodes: [node({ ready: 'Unknown' })] }),
      T0 + 181_000,
      ['delete-ephemeral-runner', 'delete-pod'],
    ],
    [
      'pod on a node being deleted (Ready still True): delete ER and force-delete the pod',
      facts({
        pods: [pod({ version: '0.13.1' })],
        ephemeralRunners: [er({ version: '0.13.1' })],
        nodes: [node({ deletionTimestamp: iso(T0) })],
      }),
      T0 + 181_000,
      ['delete-ephemeral-runner', 'delete-pod'],
    ],
    [
      'ER already deleting, pod left on a NotReady node: force-delete the pod only',
      facts({
        pods: [pod()],
        ephemeralRunners: [er({ deletionTimestamp: iso(T0) })],
        nodes: [node({ ready: 'Unknown' })],
      }),
      T0 + 181_000,
      ['delete-pod'],
    ],
    [
      'ER already deleting, no stuck-finalizer policy: nothing',
      facts({ pods: [evictedPod()], ephemeralRunners: [er({ deletionTimestamp: iso(T0) })] }),
      T0 + 3_600_000,
      [],
    ],
    [
      'lost runner whose ER is gone (ARC cleaned up): nothing',
      facts({ pods: [evictedPod()], listings: [{ cluster: CLUSTER, namespace: NS, at: T0 + 1 }] }),
      T0 + 3_600_000,
      [],
    ],
  ])('%s', (_, f, now, expected) => {
    expect(kinds(f, now)).toEqual(expected);
  });

  it('says why, which signal decided, and keys the delete on the uid', () => {
    const [a] = decide(
      facts({ pods: [evictedPod('0.8.2')], ephemeralRunners: [er({ version: '0.8.2' })] }),
      DEFAULT_POLICY,
      T0,
    ).actions;
    expect(a).toMatchObject({
      rule: 'rule-1-free-poisoned-slot',
      target: {
        kind: 'delete-ephemeral-runner',
        cluster: CLUSTER,
        namespace: NS,
        name: NAME,
        uid: `uid-er-${NAME}`,
      },
      cause: { kind: 'admission-reject', resource: 'memory' },
      signal: { source: 'pod-status' },
      dryRun: false,
      scope: { cluster: CLUSTER, namespace: NS, scaleSet: 'arc-runner-set', runnerName: NAME },
    });
    expect(a?.key).toBe(`delete-ephemeral-runner:${CLUSTER}:${NS}:${NAME}:uid-er-${NAME}`);
    expect(a?.reason).toMatch(/admission reject.*no job.*ARC ≤ 0.11/);
  });

  it('returns "wake me at" the end of the grace period instead of waiting', () => {
    const d = decide(
      facts({ pods: [evictedPod()], ephemeralRunners: [er({ version: '0.13.1' })] }),
      DEFAULT_POLICY,
      T0 + 60_000,
    );
    expect(d.actions).toEqual([]);
    expect(d.wakeAt).toBe(T0 + 180_000);
    // The grace is this runner's own timer: it alone is decided again then.
    expect(d.wakeRunners).toEqual([{ cluster: CLUSTER, namespace: NS, name: NAME }]);
  });

  it('has no timer and no runner to wake once the grace has passed and it acted', () => {
    const d = decide(
      facts({ pods: [evictedPod()], ephemeralRunners: [er({ version: '0.13.1' })] }),
      DEFAULT_POLICY,
      T0 + 181_000,
    );
    expect(d.actions.map((a) => a.target.kind)).toContain('delete-ephemeral-runner');
    expect(d).toMatchObject({ wakeAt: null, wakeRunners: null });
  });

  it('asks for the EphemeralRunner when only the eviction is known', () => {
    const d = decide(facts({ pods: [evictedPod()] }), DEFAULT_POLICY, T0);
    expect(d.needs).toEqual([
      { kind: 'ephemeral-runner', cluster: CLUSTER, namespace: NS, name: NAME },
    ]);
  });

  it.each([
    ['idle: replaced at once', false, ['delete-ephemeral-runner']],
    ['busy on the re-created pod: left alone', true, []],
  ])('old ARC re-created an evicted pod with the same JIT config, %s', (_, busy, expected) => {
    const fresh = pod({ version: '0.9.3', phase: 'Pending' });
    const f = withEvent(
      facts({
        pods: [{ ...fresh, metadata: { ...fresh.metadata, uid: 'uid-recreated' } }],
        ephemeralRunners: [
          er({
            version: '0.9.3',
            ...(busy
              ? {
                  job: { jobRepositoryName: 'acme/app', workflowRunId: 1, jobDisplayName: 'build' },
                }
              : {}),
          }),
        ],
      }),
      { reason: 'Evicted', message: 'The node had condition: [MemoryPressure].', at: T0 },
    );
    expect(kinds(f, T0 + 1500)).toEqual(expected);
  });

  describe('a runner lost after taking a job, whose pod ARC re-created (actions-runner-controller#4588)', () => {
    const recreated = (jobSeenAt: number) => {
      const fresh = pod({ version: '0.13.1' });
      return withEvent(
        facts({
          pods: [{ ...fresh, metadata: { ...fresh.metadata, uid: 'uid-recreated' } }],
          ephemeralRunners: [
            er({
              version: '0.13.1',
              job: { jobRepositoryName: 'acme/app', workflowRunId: 1, jobDisplayName: 'build' },
            }),
          ],
          erJobCache: [
            {
              cluster: CLUSTER,
              namespace: NS,
              runnerName: NAME,
              scaleSet: 'arc-runner-set',
              runnerId: 42,
              job: {
                jobId: 'g',
                jobRequestId: 1,
                jobRepositoryName: 'acme/app',
                jobWorkflowRef: null,
                workflowRunId: 1,
                jobDisplayName: 'build',
              },
              seenAt: jobSeenAt,
            },
          ],
        }),
        {
          reason: 'Evicted',
          message: 'Evicted pod: Underutilized',
          component: 'karpenter',
          at: T0,
        },
      );
    };
    it('no cache, but its job has completed: spent JIT, delete the ER at once', () => {
      const f = recreated(T0 + 30_000);
      const done = {
        ...f,
        erJobCache: [],
        jobs: [job({ jobId: 9, completedAt: iso(T0 + 100) }, null)],
      };
      expect(decide(done, DEFAULT_POLICY, T0 + 1000).actions.map((a) => a.target.kind)).toEqual([
        'delete-ephemeral-runner',
      ]);
      const running = {
        ...done,
        jobs: [job({ jobId: 9, status: 'in_progress', conclusion: null, completedAt: null })],
      };
      expect(decide(running, DEFAULT_POLICY, T0 + 1000).actions).toEqual([]);
    });

    it.each([
      [
        'job seen before the loss: spent JIT, delete the ER at once',
        T0 - 60_000,
        ['delete-ephemeral-runner'],
      ],
      ['job first seen after the loss: the re-created pod took it, leave it', T0 + 30_000, []],
    ])('%s', (_, seenAt, expected) => {
      const d = decide(recreated(seenAt), DEFAULT_POLICY, T0 + 1000);
      expect(d.actions.map((a) => a.target.kind)).toEqual(expected);
      if (expected.length > 0)
        expect(d.actions[0]?.reason).toMatch(/actions-runner-controller#4588/);
    });
  });

  it('ignores a loss about an older pod once ARC has re-created it (new uid, Running)', () => {
    const old = evictedPod();
    const fresh = pod({ version: '0.13.1' });
    const f = facts({
      pods: [{ ...fresh, metadata: { ...fresh.metadata, uid: 'uid-new' } }],
      ephemeralRunners: [er({ version: '0.13.1' })],
      losses: [
        {
          cluster: CLUSTER,
          namespace: NS,
          runnerName: NAME,
          podUid: old.metadata.uid,
          nodeName: null,
          scaleSet: 'arc-runner-set',
          ownedByArc: true,
          cause: { kind: 'admission-reject', resource: 'memory', detail: 'MemoryPressure' },
          signal: { source: 'pod-event', detail: 'Evicted' },
          at: T0,
        },
      ],
    });
    expect(kinds(f, T0 + 3_600_000)).toEqual([]);
  });

  describe('stuck finalizer (explicit policy only)', () => {
    const stuck = facts({
      ephemeralRunners: [
        er({
          phase: 'Failed',
          reason: 'InvalidPod',
          deletionTimestamp: iso(T0),
          finalizers: [
            'ephemeralrunner.actions.github.com/finalizer',
            'ephemeralrunner.actions.github.com/runner-registration-finalizer',
          ],
        }),
      ],
    });
    it.each([
      ['off by default', DEFAULT_POLICY, T0 + 86_400_000, []],
      [
        'on, before the threshold',
        policy('rules: { freePoisonedSlot: { removeStuckFinalizerAfterSeconds: 600 } }'),
        T0 + 599_000,
        [],
      ],
      [
        'on, after it: remove finalizers, then deregister',
        policy('rules: { freePoisonedSlot: { removeStuckFinalizerAfterSeconds: 600 } }'),
        T0 + 600_000,
        ['remove-finalizer', 'delete-runner-registration'],
      ],
    ])('%s', (_, p, now, expected) => {
      expect(kinds(stuck, now, p)).toEqual(expected);
    });
  });
});

describe('guardrails on cluster actions', () => {
  const lost = facts({ pods: [evictedPod('0.8.2')], ephemeralRunners: [er({ version: '0.8.2' })] });
  const relabel = (labels: Record<string, string>, owners?: object[]) =>
    facts({
      pods: [
        pod({
          phase: 'Failed',
          reason: 'Evicted',
          message: 'The node had condition: [MemoryPressure]. ',
          labels,
          ...(owners ? { ownerReferences: owners } : {}),
        }),
      ],
      ephemeralRunners: [er({ version: '0.8.2' })],
    });

  it.each<[string, Facts, Policy, string[], string | null]>([
    ['allowed by default', lost, DEFAULT_POLICY, ['delete-ephemeral-runner'], null],
    [
      'global dry run still says what it would do',
      lost,
      policy('dryRun: true'),
      ['delete-ephemeral-runner (dry-run)'],
      null,
    ],
    [
      'per-scale-set dry run',
      lost,
      policy('scaleSets: { arc-runner-set: { dryRun: true } }'),
      ['delete-ephemeral-runner (dry-run)'],
      null,
    ],
    [
      'cluster not allowed',
      lost,
      policy('allow: { clusters: [staging] }'),
      [],
      'cluster prod-eu is not in allow.clusters',
    ],
    [
      'namespace not allowed',
      lost,
      policy('allow: { namespaces: [other] }'),
      [],
      'namespace prod-eu/arc-runners is not in allow.namespaces',
    ],
    [
      'rule switched off for the cluster',
      lost,
      policy('clusters: { prod-eu: { rules: { freePoisonedSlot: { enabled: false } } } }'),
      [],
      'rule rule-1-free-poisoned-slot is off',
    ],
    [
      'scale set switched off',
      lost,
      policy('clusters: { prod-eu: { scaleSets: { arc-runner-set: { enabled: false } } } }'),
      [],
      'runner-medic is switched off for prod-eu/arc-runner-set',
    ],
    [
      'non-runner pod (no ARC runner label)',
      relabel({ ...runnerLabels('arc-runner-set', '0.8.2'), 'actions-ephemeral-runner': 'False' }),
      DEFAULT_POLICY,
      [],
      null,
    ],
    [
      'pod owned by a ReplicaSet',
      relabel(runnerLabels('arc-runner-set', '0.8.2'), [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'x', uid: 'u' },
      ]),
      DEFAULT_POLICY,
      [],
      null,
    ],
  ])('%s', (_, f, p, expected, heldWhy) => {
    const d = decide(f, p, T0);
    expect(d.actions.map((a) => `${a.target.kind}${a.dryRun ? ' (dry-run)' : ''}`)).toEqual(
      expected,
    );
    if (heldWhy) expect(d.held.map((h) => h.why)).toContain(heldWhy);
  });

  it('never re-emits an action already claimed', () => {
    const first = decide(lost, DEFAULT_POLICY, T0).actions[0];
    if (!first) throw new Error('expected an action');
    const again = decide(
      {
        ...lost,
        actions: [
          {
            key: first.key,
            kind: first.target.kind,
            rule: first.rule,
            claimedAt: T0,
            outcome: 'claimed',
            finishedAt: null,
            dryRun: false,
            budgetKeys: [],
            jobIds: [],
          },
        ],
      },
      DEFAULT_POLICY,
      T0 + 1000,
    );
    expect(again.actions).toEqual([]);
    expect(again.held).toEqual([]);
  });

  it.each([
    ['failed', true],
    ['retry-later', true],
    ['succeeded', false],
    ['gave-up', false],
  ] as const)('a delete recorded %s is proposed again: %s', (outcome, again) => {
    const first = decide(lost, DEFAULT_POLICY, T0).actions[0];
    if (!first) throw new Error('expected an action');
    const record = {
      key: first.key,
      kind: first.target.kind,
      rule: first.rule,
      claimedAt: T0,
      outcome,
      finishedAt: T0,
      dryRun: false,
      budgetKeys: [],
      jobIds: [],
    };
    const next = decide({ ...lost, actions: [record] }, DEFAULT_POLICY, T0 + 60_000).actions;
    expect(next.map((a) => a.key)).toEqual(again ? [first.key] : []);
  });

  it('never touches a fresh EphemeralRunner of the same name: the dead pod is not its own', () => {
    const fresh = er({ version: '0.8.2' });
    const f = {
      ...lost,
      ephemeralRunners: [{ ...fresh, metadata: { ...fresh.metadata, uid: 'uid-fresh' } }],
    };
    expect(decide(f, DEFAULT_POLICY, T0).actions).toEqual([]);
  });

  it('deletes by the uid it proved: the key and precondition carry the EphemeralRunner uid', () => {
    const [a] = decide(lost, DEFAULT_POLICY, T0).actions;
    expect(a?.target).toMatchObject({ kind: 'delete-ephemeral-runner', uid: `uid-er-${NAME}` });
    expect(a?.key).toContain(`uid-er-${NAME}`);
  });
});
