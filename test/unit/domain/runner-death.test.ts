import { correlate } from '../../../functions/domain/correlate/correlate.js';
import { deathEvidence, ranJob } from '../../../functions/domain/decide/runner-death.js';
import type { Facts } from '../../../functions/domain/model/facts.js';
import { er, facts, job, node, pod, record } from './builders.js';
import { CLUSTER, NS, SCALE_SET, T0, iso } from './fixtures.js';

const NAME = 'arc-runner-set-2fh9q-runner-tkvlz';
const S = 1000;
const erJob = {
  jobRepositoryName: 'acme/app',
  workflowRunId: 9_000_000_001,
  jobDisplayName: 'build',
};
const inProgress = job({ jobId: 401, status: 'in_progress', conclusion: null, completedAt: null });
const cached = {
  cluster: CLUSTER,
  namespace: NS,
  runnerName: NAME,
  scaleSet: SCALE_SET,
  runnerId: 42,
  job: { jobId: null, jobRequestId: 7, jobWorkflowRef: null, ...erJob },
  seenAt: T0 - 300 * S,
};

/** The runner's view as correlate joins it, and what the live objects say of its death. */
function evidence(f: Facts, now = T0 + 60 * S) {
  const view = correlate(f, now).runners.find((v) => v.name === NAME);
  if (!view) throw new Error('no view of the runner');
  return deathEvidence(view, f);
}

describe('deathEvidence: the live objects show a busy runner dead with its job', () => {
  it('an EphemeralRunner in phase Failed, from when it was lost', () => {
    const found = evidence(
      facts({
        jobs: [inProgress],
        pods: [],
        ephemeralRunners: [er({ phase: 'Failed', reason: 'InvalidPod', job: erJob })],
      }),
    );
    expect(found).toEqual([
      { since: 0, evidence: `EphemeralRunner ${NAME} is Failed (InvalidPod)`, mayBeGraceful: true },
    ]);
  });

  it('a runner container that has terminated in a pod still Running, from when it stopped being Ready', () => {
    const found = evidence(
      facts({
        jobs: [inProgress],
        ephemeralRunners: [er({ job: erJob })],
        pods: [
          pod({
            conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: iso(T0) }],
            containerStatuses: [
              { name: 'runner', state: { terminated: { reason: 'Error', exitCode: 137 } } },
            ],
          }),
        ],
        nodes: [node()],
      }),
    );
    expect(found).toEqual([
      {
        since: T0,
        evidence: `runner container of pod ${NAME} terminated (Error, exit 137)`,
        mayBeGraceful: true,
      },
    ]);
  });

  it('a pod looked up and missing since a time', () => {
    const found = evidence(
      facts({
        jobs: [inProgress],
        ephemeralRunners: [er({ job: erJob })],
        missingPods: [{ cluster: CLUSTER, namespace: NS, name: NAME, since: T0 }],
      }),
    );
    expect(found.map((d) => [d.since, d.evidence])).toContainEqual([
      T0,
      `pod ${NAME} not found since ${iso(T0)}`,
    ]);
  });

  it("runner-medic's own delete, the earliest carried out, when neither object is back", () => {
    const deleted = (kind: 'delete-pod' | 'delete-ephemeral-runner', at: number) =>
      record({
        key: `${kind}:${CLUSTER}:${NS}:${NAME}:uid-${at}`,
        kind,
        rule: 'rule-1-free-poisoned-slot',
        claimedAt: at,
      });
    const f = facts({
      jobs: [inProgress],
      erJobCache: [cached],
      actions: [
        deleted('delete-ephemeral-runner', T0 + 10 * S),
        deleted('delete-pod', T0),
        { ...deleted('delete-pod', T0 - 10 * S), outcome: 'failed' },
      ],
    });
    expect(evidence(f)).toEqual([
      {
        since: T0,
        evidence: `runner-medic deleted the pod of ${NAME} at ${iso(T0)} (rule-1-free-poisoned-slot), and neither is back`,
        mayBeGraceful: true,
      },
    ]);
    const onlyTheEr = { ...f, actions: [deleted('delete-ephemeral-runner', T0 + 10 * S)] };
    expect(evidence(onlyTheEr)[0]?.evidence).toMatch(/deleted the EphemeralRunner of/);
  });

  it("runner-medic's force delete of the pod, when only its EphemeralRunner is left, being deleted", () => {
    // ARC ≤ 0.14 keeps a busy runner's EphemeralRunner deleting while GitHub answers
    // JobStillRunning; a deleting EphemeralRunner never gets a pod again.
    const ours = (kind: 'delete-pod' | 'delete-ephemeral-runner', suffix: string) =>
      record({
        key: `${kind}:${CLUSTER}:${NS}:${NAME}:${suffix}`,
        kind,
        rule: 'rule-1-free-poisoned-slot',
        claimedAt: T0,
      });
    const forceDeleted = ours('delete-pod', 'uid-pod:force');
    const erDeleted = ours('delete-ephemeral-runner', 'uid-er');
    const deleting = er({ job: erJob, deletionTimestamp: iso(T0) });
    const found = evidence(
      facts({
        jobs: [inProgress],
        ephemeralRunners: [deleting],
        actions: [erDeleted, forceDeleted],
      }),
    );
    expect(found).toEqual([
      {
        since: T0,
        evidence: `runner-medic force-deleted the pod of ${NAME} at ${iso(T0)} (rule-1-free-poisoned-slot), and its EphemeralRunner is being deleted`,
        mayBeGraceful: true,
      },
    ]);
    // Our delete of the EphemeralRunner alone dates nothing: its pod may have stopped gracefully
    // long after it. Nor does our force delete while the EphemeralRunner lives on.
    const onlyTheEr = facts({
      jobs: [inProgress],
      ephemeralRunners: [deleting],
      actions: [erDeleted],
    });
    expect(evidence(onlyTheEr)).toEqual([]);
    const live = facts({
      jobs: [inProgress],
      ephemeralRunners: [er({ job: erJob })],
      actions: [forceDeleted],
    });
    expect(evidence(live)).toEqual([]);
  });

  it('a node being deleted: its own deletion time, besides the node-gone signal', () => {
    const found = evidence(
      facts({
        jobs: [inProgress],
        ephemeralRunners: [er({ job: erJob })],
        pods: [pod()],
        nodes: [node({ deletionTimestamp: iso(T0 + 5 * S) })],
      }),
    );
    expect(found).toContainEqual({
      since: T0 + 5 * S,
      evidence: 'node pool-github-runners-3-ogny9 is being deleted',
      mayBeGraceful: true,
    });
    expect(found.some((d) => d.evidence.includes('node-gone'))).toBe(true);
  });

  it('nothing for a live runner on a Ready node', () => {
    expect(
      evidence(
        facts({
          jobs: [inProgress],
          ephemeralRunners: [er({ job: erJob })],
          pods: [pod()],
          nodes: [node()],
        }),
      ),
    ).toEqual([]);
  });
});

describe('ranJob: the runner took this job', () => {
  const view = (f: Facts) => {
    const v = correlate(f, T0).runners.find((r) => r.name === NAME);
    if (!v) throw new Error('no view');
    return v;
  };
  const unnamed = job({ jobId: 402, runnerName: null, runnerId: null, status: 'in_progress' });

  it('by the runner name GitHub reports', () => {
    const v = view(facts({ ephemeralRunners: [er()] }));
    expect(ranJob(v, inProgress)).toBe(true);
    expect(ranJob(v, job({ runnerName: 'another-runner' }))).toBe(false);
  });

  it("when GitHub names no runner, by the EphemeralRunner's job fields", () => {
    expect(ranJob(view(facts({ ephemeralRunners: [er({ job: erJob })] })), unnamed)).toBe(true);
    const otherJob = { ...erJob, jobDisplayName: 'test' };
    expect(ranJob(view(facts({ ephemeralRunners: [er({ job: otherJob })] })), unnamed)).toBe(false);
    expect(ranJob(view(facts({ ephemeralRunners: [er()] })), unnamed)).toBe(false);
  });
});
