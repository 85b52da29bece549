import { classifyEvent } from '../../../functions/domain/classify/classify.js';
import { decide } from '../../../functions/domain/decide/decide.js';
import type { Facts, RunnerRegistration } from '../../../functions/domain/model/facts.js';
import { parseExportedKubeEvent } from '../../../functions/domain/parse/parse-kube-event.js';
import { parsePolicy, type Policy } from '../../../functions/domain/policy/policy.js';
import { isArcRunnerPod } from '../../../functions/domain/correlate/runner-guard.js';
import { er, facts, job, pod, run, unwrap } from './builders.js';
import { CLUSTER, LOST_ANNOTATION, NS, T0, erOwner, exportedEvent, iso } from './fixtures.js';

const NAME = 'arc-runner-set-2fh9q-runner-tkvlz';
const ELSEWHERE = 'team-sandbox';
const rule4On: Policy = unwrap(
  parsePolicy(
    'rules: { hungJob: { enabled: true, graceSeconds: 600, forceCancelAfterSeconds: 300 } }',
  ),
);
const summary = (f: Facts, now: number, p: Policy = rule4On) =>
  decide(f, p, now).actions.map((a) => `${a.rule} ${a.target.kind}`);

/** A pod in `namespace` with ARC's labels, claiming the real runner's EphemeralRunner as owner. */
function lookAlikePod(namespace: string, ownerUid: string) {
  const p = pod({
    name: NAME,
    phase: 'Running',
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: iso(T0 - 60_000) }],
    ownerReferences: [{ ...erOwner(NAME), uid: ownerUid }],
  });
  return { ...p, metadata: { ...p.metadata, namespace, uid: 'uid-look-alike' } };
}

/** An Event the intruder created about its own pod: right reason, right component, any text. */
function evictionOf(namespace: string, podUid = 'uid-look-alike') {
  const raw = exportedEvent({
    reason: 'Evicted',
    message: 'The node was low on resource: memory. ',
    component: 'kubelet',
    at: T0,
  });
  const c = classifyEvent(
    unwrap(
      parseExportedKubeEvent({
        ...raw,
        metadata: { ...raw.metadata, namespace },
        involvedObject: {
          ...raw.involvedObject,
          namespace,
          uid: podUid,
          ownerReferences: [{ ...erOwner(NAME) }],
        },
      }),
    ),
  );
  if (c.kind !== 'loss') throw new Error(`expected a loss, got ${c.kind}`);
  return c.loss;
}

const realRunnersJob = job({
  jobId: 401,
  status: 'in_progress',
  conclusion: null,
  completedAt: null,
  runnerName: NAME,
});

describe('a look-alike runner pod in another namespace', () => {
  const realPod = () =>
    pod({
      name: NAME,
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: iso(T0 - 60_000) }],
    });
  it.each([
    ['with a made-up owner uid, the real runner not yet read', 'uid-made-up', false],
    [
      'with the real EphemeralRunner uid copied, the real runner not yet read',
      `uid-er-${NAME}`,
      false,
    ],
    ['with a made-up owner uid, next to the real runner', 'uid-made-up', true],
  ])('%s: its forged loss cancels no run and deletes nothing', (_name, ownerUid, withReal) => {
    const f = facts({
      pods: [...(withReal ? [realPod()] : []), lookAlikePod(ELSEWHERE, ownerUid)],
      ephemeralRunners: withReal ? [er({ name: NAME })] : [],
      jobs: [realRunnersJob],
      losses: [evictionOf(ELSEWHERE)],
    });

    const d = decide(f, rule4On, T0 + 3_600_000);
    expect(d.actions).toEqual([]);
  });

  it('is not proven ARC by the real EphemeralRunner of another namespace, even with its uid', () => {
    const real = er({ name: NAME });
    expect(isArcRunnerPod(lookAlikePod(ELSEWHERE, real.metadata.uid), real)).toBe(false);
    expect(isArcRunnerPod({ ...pod({ name: NAME }), cluster: 'other-cluster' }, real)).toBe(false);
    expect(isArcRunnerPod(pod({ name: NAME }), real)).toBe(true);
  });

  it('a pod whose owner reference is not its controller is not ARC’s', () => {
    const real = er({ name: NAME });
    const p = pod({ name: NAME, ownerReferences: [{ ...erOwner(NAME), controller: false }] });
    expect(isArcRunnerPod(p, real)).toBe(false);
  });

  it('the genuine runner, with the same forged-looking loss in its own namespace, is still handled', () => {
    // Its own pod shows the eviction (rule 4 acts on live objects, not on an event alone).
    const evicted = pod({
      name: NAME,
      phase: 'Failed',
      reason: 'Evicted',
      message: 'The node was low on resource: memory. ',
    });
    const f = facts({
      pods: [evicted],
      ephemeralRunners: [er({ name: NAME })],
      jobs: [realRunnersJob],
      losses: [evictionOf(NS, `uid-pod-${NAME}`)],
    });
    expect(summary(f, T0 + 3_600_000)).toContain('rule-4-hung-job cancel-run');
  });
});

describe('a look-alike registration', () => {
  const macMini: RunnerRegistration = {
    id: 9001,
    name: 'mac-mini-runner-zzzzz',
    status: 'offline',
    busy: false,
    labels: ['self-hosted', 'macOS', 'ARM64'],
    owner: { org: 'acme' },
    installationId: 77,
    offlineSince: T0,
  };

  it('an offline non-ARC runner named like a look-alike pod is never deregistered', () => {
    const decoy = pod({ name: 'mac-mini-runner-xxxxx' });
    const f = facts({
      pods: [{ ...decoy, metadata: { ...decoy.metadata, namespace: ELSEWHERE } }],
      registrations: [macMini],
      listings: [
        { cluster: CLUSTER, namespace: ELSEWHERE, at: T0 + 1 },
        { cluster: CLUSTER, namespace: NS, at: T0 + 1 },
      ],
    });

    expect(summary(f, T0 + 24 * 3_600_000)).toEqual([]);
  });
});

describe('a look-alike runner (its own pod and EphemeralRunner) with the real runner’s name', () => {
  /** GitHub's runner id of the real runner; ARC writes it to its ER's status.runnerId. */
  const REAL_ID = 42;
  const ready = [{ type: 'Ready', status: 'True', lastTransitionTime: iso(T0 - 60_000) }];
  const evicted = {
    phase: 'Failed',
    reason: 'Evicted',
    message: 'The node was low on resource: memory. ',
    conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: iso(T0) }],
  };

  /**
   * A pod and an EphemeralRunner in `where`, the ER labelled and owned as ARC's and the pod
   * controlled by that ER's uid: everything runner-guard can check, except GitHub's runner id.
   */
  function runnerAt(
    where: { cluster: string; namespace: string },
    o: { runnerId: number | null; lost: boolean; tag: string },
  ) {
    const p = pod({
      name: NAME,
      ...(o.lost ? evicted : { phase: 'Running', conditions: ready }),
      ownerReferences: [{ ...erOwner(NAME), uid: `uid-er-${o.tag}` }],
    });
    const e = er({ name: NAME });
    return {
      pod: {
        ...p,
        cluster: where.cluster,
        metadata: { ...p.metadata, namespace: where.namespace, uid: `uid-pod-${o.tag}` },
      },
      er: {
        ...e,
        cluster: where.cluster,
        runnerId: o.runnerId,
        metadata: { ...e.metadata, namespace: where.namespace, uid: `uid-er-${o.tag}` },
      },
    };
  }

  const GENUINE = { cluster: CLUSTER, namespace: NS };
  const PLACES = [
    ['in another namespace', { cluster: CLUSTER, namespace: ELSEWHERE }],
    ['in another cluster', { cluster: 'other-cluster', namespace: NS }],
  ] as const;

  const JOB_ACTIONS = ['cancel-run', 'force-cancel-run', 'rerun-failed-jobs', 'rerun-job'];
  const jobActions = (f: Facts, now: number) =>
    decide(f, rule4On, now)
      .actions.filter((a) => JOB_ACTIONS.includes(a.target.kind))
      .map((a) => `${a.target.kind} ${a.scope.cluster}/${a.scope.namespace}`);

  /** The look-alike first: a join by name alone picks the first runner of that name. */
  const world = (
    place: { cluster: string; namespace: string },
    o: { lookAlikeId: number | null; lookAlikeLost: boolean; genuineLost: boolean },
    jobs: Facts['jobs'],
  ) => {
    const fake = runnerAt(place, { runnerId: o.lookAlikeId, lost: o.lookAlikeLost, tag: 'fake' });
    const real = runnerAt(GENUINE, { runnerId: REAL_ID, lost: o.genuineLost, tag: 'real' });
    return facts({ pods: [fake.pod, real.pod], ephemeralRunners: [fake.er, real.er], jobs });
  };

  describe.each(PLACES)('%s', (_where, place) => {
    it.each([
      ['with another runner id', 666],
      ['with no runner id', null],
    ])('%s, lost: its loss cancels none of the real runner’s runs', (_name, lookAlikeId) => {
      const f = world(place, { lookAlikeId, lookAlikeLost: true, genuineLost: false }, [
        realRunnersJob,
      ]);
      expect(jobActions(f, T0 + 3_600_000)).toEqual([]);
    });

    it('copying the real runner id as well makes the job ambiguous: no action on either', () => {
      const f = world(place, { lookAlikeId: REAL_ID, lookAlikeLost: true, genuineLost: false }, [
        realRunnersJob,
      ]);
      expect(jobActions(f, T0 + 3_600_000)).toEqual([]);
    });

    it('healthy, next to the genuine runner lost: the genuine runner’s run is cancelled', () => {
      const f = world(place, { lookAlikeId: 666, lookAlikeLost: false, genuineLost: true }, [
        realRunnersJob,
      ]);
      expect(jobActions(f, T0 + 3_600_000)).toEqual([`cancel-run ${CLUSTER}/${NS}`]);
    });

    it('healthy, next to the genuine runner lost: the genuine runner’s killed job is re-run', () => {
      const killed = job({ jobId: 402 }, [
        { annotation_level: 'failure', message: LOST_ANNOTATION },
      ]);
      const f = {
        ...world(place, { lookAlikeId: 666, lookAlikeLost: false, genuineLost: true }, [killed]),
        runs: [run()],
      };
      expect(jobActions(f, T0 + 120_000)).toEqual([`rerun-failed-jobs ${CLUSTER}/${NS}`]);
    });

    it('without a runner id on either side, a name two proven runners share joins neither', () => {
      const f = world(place, { lookAlikeId: null, lookAlikeLost: true, genuineLost: true }, [
        job({
          jobId: 403,
          status: 'in_progress',
          conclusion: null,
          completedAt: null,
          runnerId: null,
        }),
      ]);
      const realWithoutId = f.ephemeralRunners.map((e) => ({ ...e, runnerId: null }));
      expect(jobActions({ ...f, ephemeralRunners: realWithoutId }, T0 + 3_600_000)).toEqual([]);
    });
  });
});
