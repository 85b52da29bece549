import { classifyKilledRunner } from '../../../functions/domain/classify/classify-pod.js';
import { correlate } from '../../../functions/domain/correlate/correlate.js';
import { decide } from '../../../functions/domain/decide/decide.js';
import { deathEvidence } from '../../../functions/domain/decide/runner-death.js';
import { DEFAULT_POLICY } from '../../../functions/domain/policy/policy.js';
import type { Facts, RunnerRegistration } from '../../../functions/domain/model/facts.js';
import { describeCause, type Loss } from '../../../functions/domain/model/loss.js';
import { er, facts, job, pod } from './builders.js';
import { CLUSTER, NS, SCALE_SET, T0, iso } from './fixtures.js';

/**
 * ARC 0.15 deletes a killed busy runner's EphemeralRunner and pod within a second, and no
 * component emits an Event for a container killed under a running pod: the fast path decides
 * from what was put on record before they went, never from their absence alone.
 */
const NAME = 'arc-runner-set-2fh9q-runner-tkvlz';
const S = 1000;
const killed = (exitCode: number, reason = 'Error') => ({
  name: 'runner',
  state: { terminated: { reason, exitCode } },
});
const notReady = [{ type: 'Ready', status: 'False', lastTransitionTime: iso(T0) }];

describe('classifyKilledRunner: a runner container killed with nothing else to explain it', () => {
  it('exit 137 (SIGKILL) is a kill, dated when the pod stopped being Ready', () => {
    const loss = classifyKilledRunner(
      pod({ phase: 'Failed', conditions: notReady, containerStatuses: [killed(137)] }),
    );
    expect(loss).toMatchObject({
      runnerName: NAME,
      podUid: `uid-pod-${NAME}`,
      scaleSet: SCALE_SET,
      ownedByArc: true,
      cause: { kind: 'runner-killed', container: 'runner', exitCode: 137 },
      signal: {
        source: 'container-status',
        detail: 'container runner terminated Error (exit 137): killed',
      },
      at: T0,
    });
    expect(loss && describeCause(loss.cause)).toBe('killed (container runner, exit 137)');
  });

  it('dated by the deletion when the pod is still Ready, undated with neither; no reason is said so', () => {
    const deleting = pod({
      deletionTimestamp: iso(T0 + 5 * S),
      containerStatuses: [{ name: 'runner', state: { terminated: { exitCode: 137 } } }],
    });
    expect(classifyKilledRunner(deleting)).toMatchObject({
      at: T0 + 5 * S,
      signal: { detail: 'container runner terminated no reason (exit 137): killed' },
    });
    expect(classifyKilledRunner(pod({ containerStatuses: [killed(137)] }))?.at).toBeNull();
  });

  it('not a container that exited by itself (exit 1, exit 0), nor a live runner', () => {
    for (const exitCode of [1, 0, 143])
      expect(
        classifyKilledRunner(
          pod({ phase: 'Failed', conditions: notReady, containerStatuses: [killed(exitCode)] }),
        ),
      ).toBeNull();
    expect(classifyKilledRunner(pod())).toBeNull();
    expect(
      classifyKilledRunner(pod({ containerStatuses: [{ ...killed(137), name: 'dind' }] })),
    ).toBeNull();
  });

  it('not a pod classifyPod explains (OOMKilled, an eviction): that loss is its own', () => {
    expect(classifyKilledRunner(pod({ containerStatuses: [killed(137, 'OOMKilled')] }))).toBeNull();
    expect(
      classifyKilledRunner(
        pod({
          phase: 'Failed',
          reason: 'Evicted',
          message: 'The node was low on resource: memory. ',
          containerStatuses: [killed(137)],
        }),
      ),
    ).toBeNull();
  });
});

describe('deathEvidence: a busy runner gone after its end was put on record', () => {
  const inProgress = job({
    jobId: 401,
    status: 'in_progress',
    conclusion: null,
    completedAt: null,
  });
  const cached = {
    cluster: CLUSTER,
    namespace: NS,
    runnerName: NAME,
    scaleSet: SCALE_SET,
    runnerId: 42,
    job: {
      jobId: null,
      jobRequestId: 7,
      jobWorkflowRef: null,
      jobRepositoryName: 'acme/app',
      workflowRunId: 9_000_000_001,
      jobDisplayName: 'build',
    },
    seenAt: T0 - 300 * S,
  };
  const kill = (o: Partial<Loss> = {}): Loss => ({
    cluster: CLUSTER,
    namespace: NS,
    runnerName: NAME,
    podUid: `uid-pod-${NAME}`,
    nodeName: null,
    scaleSet: SCALE_SET,
    ownedByArc: true,
    cause: { kind: 'runner-killed', container: 'runner', exitCode: 137 },
    signal: {
      source: 'container-status',
      detail: 'container runner terminated Error (exit 137): killed',
    },
    at: T0,
    ...o,
  });
  const registration = (o: Partial<RunnerRegistration> = {}): RunnerRegistration => ({
    id: 42,
    name: NAME,
    status: 'offline',
    busy: true,
    labels: [SCALE_SET],
    owner: { org: 'acme' },
    installationId: 1,
    offlineSince: T0 + 20 * S,
    ...o,
  });
  const looked = { cluster: CLUSTER, namespace: NS, at: T0 + 60 * S };
  const gone = (o: Partial<Facts> = {}) =>
    facts({ jobs: [inProgress], erJobCache: [cached], listings: [looked], ...o });

  function evidence(f: Facts) {
    const view = correlate(f, T0 + 60 * S).runners.find((v) => v.name === NAME);
    if (!view) throw new Error('no view of the runner');
    return deathEvidence(view, f);
  }

  it('a kill on record (its pod seen killed, or an exporter event) since it took its job', () => {
    expect(evidence(gone({ losses: [kill()] }))).toEqual([
      {
        since: T0,
        evidence: `EphemeralRunner and pod ${NAME} gone at ${iso(T0 + 60 * S)}; before that, killed (container runner, exit 137) at ${iso(T0)} (container-status: container runner terminated Error (exit 137): killed), after it took its job`,
        mayBeGraceful: true,
      },
    ]);
    const evicted = kill({
      cause: { kind: 'api-eviction', by: 'karpenter', karpenterReason: 'consolidation' },
      signal: { source: 'pod-event', detail: 'Evicted pod' },
    });
    expect(evidence(gone({ losses: [evicted] }))[0]?.since).toBe(T0);
  });

  it("GitHub's registration of its runner id offline while still busy, which dates nothing: no grace", () => {
    expect(evidence(gone({ registrations: [registration()] }))).toEqual([
      {
        since: T0 + 20 * S,
        evidence: `EphemeralRunner and pod ${NAME} gone at ${iso(T0 + 60 * S)}; before that, GitHub runner 42 offline and busy since ${iso(T0 + 20 * S)}, after it took its job`,
        mayBeGraceful: false,
      },
    ]);
    // A dated kill on record is still the end that counts, with its grace.
    expect(
      evidence(gone({ losses: [kill()], registrations: [registration()] })).map((d) => [
        d.since,
        d.mayBeGraceful,
      ]),
    ).toEqual([[T0, true]]);
  });

  it('the job start dates what counts; without one, when its job fields were first seen', () => {
    const unstarted = { ...inProgress, job: { ...inProgress.job, startedAt: null } };
    const early = kill({ at: T0 - 400 * S });
    expect(evidence(gone({ jobs: [unstarted], losses: [early] }))).toEqual([]);
    expect(evidence(gone({ jobs: [unstarted], losses: [kill()] }))[0]?.since).toBe(T0);
  });

  it('nothing on absence alone, nor on what does not end a runner, nor on an end before its job', () => {
    expect(evidence(gone())).toEqual([]);
    const before = T0 - 600 * S;
    for (const losses of [
      [kill({ at: before })],
      [kill({ at: null })],
      [kill({ cause: { kind: 'pod-not-found' } })],
      [kill({ cause: { kind: 'node-not-ready' } })],
      [kill({ cause: { kind: 'runner-stuck' } })],
      [kill({ cause: { kind: 'runner-failed', reason: 'InvalidPod' } })],
    ])
      expect(evidence(gone({ losses }))).toEqual([]);
    for (const r of [
      registration({ status: 'online', offlineSince: null }),
      registration({ busy: false }),
      registration({ offlineSince: null }),
      registration({ offlineSince: before }),
      registration({ id: 43 }),
      registration({ name: 'another-runner' }),
    ])
      expect(evidence(gone({ registrations: [r] }))).toEqual([]);
  });

  it('nothing unless both objects were looked up after the end, and the store knew its job', () => {
    const losses = [kill()];
    expect(evidence(gone({ losses, listings: [] }))).toEqual([]);
    expect(evidence(gone({ losses, listings: [{ ...looked, at: T0 - S }] }))).toEqual([]);
    expect(evidence(gone({ losses, listings: [{ ...looked, namespace: 'other' }] }))).toEqual([]);
    expect(evidence(gone({ losses, erJobCache: [] }))).toEqual([]);
  });
});

describe('rule 4 on ARC 0.15: the run of a killed runner whose objects are gone', () => {
  const inProgress = job({
    jobId: 401,
    status: 'in_progress',
    conclusion: null,
    completedAt: null,
  });
  const killedAt = T0;
  const f = (o: Partial<Facts> = {}) =>
    facts({
      jobs: [inProgress],
      erJobCache: [
        {
          cluster: CLUSTER,
          namespace: NS,
          runnerName: NAME,
          scaleSet: SCALE_SET,
          runnerId: 42,
          job: {
            jobId: null,
            jobRequestId: 7,
            jobWorkflowRef: null,
            jobRepositoryName: 'acme/app',
            workflowRunId: 9_000_000_001,
            jobDisplayName: 'build',
          },
          seenAt: T0 - 300 * S,
        },
      ],
      listings: [{ cluster: CLUSTER, namespace: NS, at: T0 + 30 * S }],
      ...o,
    });
  const stored = classifyKilledRunner(
    pod({
      phase: 'Failed',
      conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: iso(killedAt) }],
      containerStatuses: [killed(137)],
    }),
  );
  const rule4 = (x: Facts, now: number) =>
    decide(x, DEFAULT_POLICY, now).actions.filter((a) => a.rule === 'rule-4-hung-job');

  it('cancels the run once the grace has passed since the recorded kill', () => {
    if (!stored) throw new Error('no kill');
    const withKill = f({ losses: [stored] });
    const [cancel] = rule4(withKill, T0 + 30 * S);
    expect(cancel?.target).toMatchObject({ kind: 'cancel-run', jobIds: [401], runAttempt: 1 });
    expect(cancel?.cause).toEqual({ kind: 'runner-killed', container: 'runner', exitCode: 137 });
    expect(cancel?.reason).toContain(`EphemeralRunner and pod ${NAME} gone`);
    expect(rule4(withKill, T0 + 29 * S)).toEqual([]);
  });

  it("cancels at sight when GitHub's registration, offline and busy, is the only record of the end", () => {
    // The sweep that first reads the registration offline (T0 + 30 s) is also the one that finds
    // both objects gone: no grace from that read, which may come a whole sweep after the kill.
    const offline: RunnerRegistration = {
      id: 42,
      name: NAME,
      status: 'offline',
      busy: true,
      labels: [SCALE_SET],
      owner: { org: 'acme' },
      installationId: 1,
      offlineSince: T0 + 30 * S,
    };
    const [cancel] = rule4(f({ registrations: [offline] }), T0 + 30 * S);
    expect(cancel?.target).toMatchObject({ kind: 'cancel-run', jobIds: [401], runAttempt: 1 });
    expect(cancel?.reason).toContain('GitHub runner 42 offline and busy since');
    expect(rule4(f({ registrations: [{ ...offline, busy: false }] }), T0 + 30 * S)).toEqual([]);
  });

  it('holds its hand on absence alone, as after a container that exited 1 by itself', () => {
    expect(rule4(f(), T0 + 60 * S)).toEqual([]);
    const sighting = classifyKilledRunner(
      pod({ phase: 'Failed', conditions: [], containerStatuses: [killed(1)] }),
    );
    const losses = sighting ? [sighting] : [];
    expect(rule4(f({ losses }), T0 + 60 * S)).toEqual([]);
  });
});

describe('rule 1 and a busy runner killed under its pod', () => {
  const objects = (version: string) => {
    const killedPod = pod({
      phase: 'Failed',
      conditions: notReady,
      containerStatuses: [killed(137)],
      version,
    });
    const runner = er({
      version,
      job: {
        jobRepositoryName: 'acme/app',
        workflowRunId: 9_000_000_001,
        jobDisplayName: 'build',
      },
    });
    const loss = classifyKilledRunner(killedPod);
    if (!loss) throw new Error('no kill');
    const cache = {
      cluster: CLUSTER,
      namespace: NS,
      runnerName: NAME,
      scaleSet: SCALE_SET,
      runnerId: 42,
      job: runner.job,
      seenAt: T0 - 300 * S,
    };
    return facts({
      pods: [killedPod],
      ephemeralRunners: [runner],
      losses: [loss],
      erJobCache: [cache],
      listings: [{ cluster: CLUSTER, namespace: NS, at: T0 }],
    });
  };
  const deletes = (x: Facts, now: number) =>
    decide(x, DEFAULT_POLICY, now).actions.filter(
      (a) => a.target.kind === 'delete-ephemeral-runner',
    );

  it('ARC 0.13 never frees that slot: its EphemeralRunner is deleted at sight', () => {
    expect(deletes(objects('0.13.1'), T0)).toHaveLength(1);
  });

  it('ARC 0.15 deletes it itself within a second: the ordinary grace, then only if it did not', () => {
    const x = objects('0.15.1');
    expect(deletes(x, T0)).toEqual([]);
    expect(deletes(x, T0 + 179 * S)).toEqual([]);
    expect(deletes(x, T0 + 180 * S)).toHaveLength(1);
  });
});
