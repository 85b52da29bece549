import { classifyEvent } from '../../../functions/domain/classify.js';
import { decide } from '../../../functions/domain/decide.js';
import type { Facts, RunnerRegistration } from '../../../functions/domain/facts.js';
import { parseExportedKubeEvent } from '../../../functions/domain/parse-kube-event.js';
import { parsePolicy, type Policy } from '../../../functions/domain/policy.js';
import { isArcRunnerPod } from '../../../functions/domain/runner-guard.js';
import { er, facts, job, pod, unwrap } from './builders.js';
import { CLUSTER, NS, T0, erOwner, exportedEvent, iso } from './fixtures.js';

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
    const f = facts({
      pods: [pod({ name: NAME, phase: 'Running' })],
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
