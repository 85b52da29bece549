import { decide } from '../../../functions/domain/decide/decide.js';
import type { Facts, RunnerRegistration } from '../../../functions/domain/model/facts.js';
import {
  DEFAULT_POLICY,
  parsePolicy,
  type Policy,
} from '../../../functions/domain/policy/policy.js';
import {
  er,
  evictedRunners,
  facts,
  job,
  node,
  pod,
  record,
  unwrap,
  withEvent,
} from './builders.js';
import { CLUSTER, NS, T0, iso } from './fixtures.js';

const NAME = 'arc-runner-set-2fh9q-runner-tkvlz';
const policy = (yaml: string): Policy => unwrap(parsePolicy(yaml));
const kinds = (f: Facts, now: number, p: Policy = DEFAULT_POLICY) =>
  decide(f, p, now).actions.map((a) => `${a.rule} ${a.target.kind}`);

describe('rule 2: starving queue', () => {
  const queued = job({
    jobId: 301,
    status: 'queued',
    conclusion: null,
    runnerName: null,
    runnerId: null,
    createdAt: iso(T0),
  });
  const lostNew = facts({
    jobs: [queued],
    pods: [
      pod({
        phase: 'Failed',
        reason: 'Evicted',
        message: 'The node had condition: [DiskPressure]. ',
        version: '0.13.1',
        conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: iso(T0) }],
      }),
    ],
    ephemeralRunners: [er({ version: '0.13.1' })],
  });
  it.each<[string, Facts, number, string[]]>([
    [
      'queued under the threshold: nothing yet (rule 1 grace still running)',
      lostNew,
      T0 + 120_000,
      [],
    ],
    [
      'queued past the threshold: free the lost slot now',
      lostNew,
      T0 + 300_000,
      ['rule-2-starving-queue delete-ephemeral-runner'],
    ],
    [
      'queued past the threshold with no lost runner: report the starvation',
      facts({ jobs: [queued], pods: [pod()], ephemeralRunners: [er()] }),
      T0 + 300_000,
      ['rule-2-starving-queue report-starvation'],
    ],
    [
      'a queued job for a label runner-medic does not know: nothing',
      facts({
        jobs: [{ ...queued, job: { ...queued.job, labels: ['ubuntu-latest'] } }],
        pods: [pod()],
        ephemeralRunners: [er()],
      }),
      T0 + 3_600_000,
      [],
    ],
    [
      'a job waiting for an environment approval is not starving',
      facts({
        jobs: [{ ...queued, job: { ...queued.job, status: 'waiting' } }],
        pods: [pod()],
        ephemeralRunners: [er()],
      }),
      T0 + 3_600_000,
      [],
    ],
  ])('%s', (_, f, now, expected) => {
    expect(kinds(f, now)).toEqual(expected);
  });

  it('wakes at the threshold', () => {
    expect(
      decide(
        facts({ jobs: [queued], pods: [pod()], ephemeralRunners: [er()] }),
        DEFAULT_POLICY,
        T0 + 1000,
      ).wakeAt,
    ).toBe(T0 + 300_000);
  });
});

describe('rule 4: hung job (the fast path: test/unit/domain/rules/hung-job.test.ts)', () => {
  const on = policy(
    'rules: { hungJob: { enabled: true, graceSeconds: 600, forceCancelAfterSeconds: 300 } }',
  );
  const inProgress = job({
    jobId: 401,
    status: 'in_progress',
    conclusion: null,
    completedAt: null,
  });
  const gone = withEvent(facts({ jobs: [inProgress], ephemeralRunners: [er()] }), {
    reason: 'Evicted',
    message: 'Evicted pod: Drifted',
    component: 'karpenter',
    at: T0,
  });
  const cancelKey = `cancel-run:acme/app:${inProgress.job.runId}:1`;
  it.each<[string, Policy, Facts, number, string[]]>([
    [
      'default policy: an eviction event alone is no proof that the runner died',
      DEFAULT_POLICY,
      gone,
      T0 + 3_600_000,
      ['rule-1-free-poisoned-slot delete-ephemeral-runner'],
    ],
    ['enabled, within grace', on, gone, T0 + 500_000, []],
    ['enabled, past grace, an event alone: nothing', on, gone, T0 + 600_000, []],
    [
      'cancelled, still in progress, before force: nothing',
      on,
      {
        ...gone,
        actions: [
          record({
            key: cancelKey,
            kind: 'cancel-run',
            rule: 'rule-4-hung-job',
            finishedAt: T0 + 600_000,
            jobIds: [401],
          }),
        ],
      },
      T0 + 800_000,
      [],
    ],
    [
      'cancelled, still in progress after forceCancelAfterSeconds: force-cancel',
      on,
      {
        ...gone,
        actions: [
          record({
            key: `${cancelKey}:try:0`,
            kind: 'cancel-run',
            rule: 'rule-4-hung-job',
            finishedAt: T0 + 600_000,
            jobIds: [401],
          }),
        ],
      },
      T0 + 900_000,
      ['rule-4-hung-job force-cancel-run'],
    ],
  ])('%s', (_, p, f, now, expected) => {
    expect(kinds(f, now, p).filter((k) => !k.startsWith('rule-1') || p === DEFAULT_POLICY)).toEqual(
      expected,
    );
  });

  it('after our cancel, rule 3 re-runs the job though its annotations hold no loss text', () => {
    const cancelled = job({ jobId: 401, conclusion: 'cancelled' }, [
      { annotation_level: 'failure', message: 'The operation was canceled.' },
    ]);
    const f = {
      ...gone,
      jobs: [cancelled],
      runs: [],
      actions: [
        record({ key: cancelKey, kind: 'cancel-run', rule: 'rule-4-hung-job', jobIds: [401] }),
      ],
    };
    const withRun = {
      ...f,
      runs: [
        {
          repository: cancelled.repository,
          installationId: 77,
          run: {
            runId: cancelled.job.runId,
            runAttempt: 1,
            name: 'CI',
            status: 'completed',
            conclusion: 'cancelled',
            event: 'push',
            htmlUrl: '',
            createdAt: iso(T0),
            updatedAt: iso(T0),
            runStartedAt: iso(T0),
          },
        },
      ],
    };
    expect(kinds(withRun, T0 + 1_000_000, on)).toContain(
      'rule-3-rerun-killed-job rerun-failed-jobs',
    );
    const dryCancel = record({
      key: cancelKey,
      kind: 'cancel-run',
      rule: 'rule-4-hung-job',
      jobIds: [401],
      outcome: 'dry-run',
      dryRun: true,
    });
    expect(kinds({ ...withRun, actions: [dryCancel] }, T0 + 1_000_000, on)).not.toContain(
      'rule-3-rerun-killed-job rerun-failed-jobs',
    );
  });
});

describe('rule 5: orphan registration', () => {
  const reg = (o: Partial<RunnerRegistration> = {}): RunnerRegistration => ({
    id: 555,
    name: 'arc-runner-set-2fh9q-runner-zzzzz',
    status: 'offline',
    busy: false,
    labels: ['arc-runner-set'],
    owner: { org: 'acme' },
    installationId: 77,
    offlineSince: T0,
    ...o,
  });
  /** ARC's EphemeralRunner of the registration, seen (and cached) before it went away. */
  const formerEr = (o: Partial<Facts['erJobCache'][number]> = {}) => ({
    cluster: CLUSTER,
    namespace: NS,
    runnerName: 'arc-runner-set-2fh9q-runner-zzzzz',
    scaleSet: 'arc-runner-set',
    runnerId: 555,
    job: {
      jobId: null,
      jobRequestId: 7,
      jobRepositoryName: 'acme/app',
      jobWorkflowRef: null,
      workflowRunId: 1,
      jobDisplayName: 'build',
    },
    seenAt: T0 - 60_000,
    ...o,
  });
  const base = (
    r: RunnerRegistration,
    listedAt = T0 + 1,
    cache: Facts['erJobCache'] = [formerEr()],
  ) =>
    facts({
      pods: [pod()],
      ephemeralRunners: [er()],
      erJobCache: cache,
      registrations: [r],
      listings: [{ cluster: CLUSTER, namespace: NS, at: listedAt }],
    });
  it.each<[string, Facts, number, string[]]>([
    [
      'offline past grace, no ER: delete',
      base(reg()),
      T0 + 900_000,
      ['rule-5-orphan-registration delete-runner-registration'],
    ],
    ['offline, within grace', base(reg()), T0 + 60_000, []],
    ['online', base(reg({ status: 'online', offlineSince: null })), T0 + 900_000, []],
    [
      'its EphemeralRunner exists: not an orphan, but a Running pod whose runner never connects (rule 1)',
      // The EphemeralRunner's own registration: its status.runnerId (42) and its name.
      base(reg({ id: 42, name: NAME })),
      T0 + 900_000,
      ['rule-1-free-poisoned-slot delete-ephemeral-runner'],
    ],
    [
      'its EphemeralRunner exists and it is online',
      base(reg({ id: 42, name: NAME, status: 'online', offlineSince: null })),
      T0 + 900_000,
      [],
    ],
    [
      'a name from no EphemeralRunnerSet we know',
      base(reg({ name: 'build-box-1' })),
      T0 + 900_000,
      [],
    ],
    ['no listing since it went offline', base(reg(), T0 - 1), T0 + 900_000, []],
    [
      'named like a scale set runner, but no ARC EphemeralRunner ever had its runner id',
      base(reg(), T0 + 1, []),
      T0 + 900_000,
      [],
    ],
    [
      'an ARC EphemeralRunner of that name had another runner id',
      base(reg(), T0 + 1, [formerEr({ runnerId: 556 })]),
      T0 + 900_000,
      [],
    ],
    [
      'the registration does not wear the scale set label of that EphemeralRunner',
      base(reg({ labels: ['self-hosted', 'macOS'] }), T0 + 1),
      T0 + 900_000,
      [],
    ],
    [
      '422 still running a job: retried later',
      {
        ...base(reg()),
        actions: [
          record({
            key: 'delete-registration:555:try:0',
            kind: 'delete-runner-registration',
            outcome: 'retry-later',
            finishedAt: T0 + 900_000,
          }),
        ],
      },
      T0 + 960_000,
      ['rule-5-orphan-registration delete-runner-registration'],
    ],
  ])('%s', (_, f, now, expected) => {
    expect(kinds(f, now)).toEqual(expected);
  });
});

describe('rule 6: warned node', () => {
  const idle = facts({ pods: [pod()], ephemeralRunners: [er()], nodes: [node()] });
  const busy = facts({
    pods: [pod()],
    ephemeralRunners: [
      er({ job: { jobRepositoryName: 'acme/app', workflowRunId: 1, jobDisplayName: 'build' } }),
    ],
    nodes: [node()],
  });
  const spot = {
    cluster: null,
    nodeName: null,
    instanceId: 'i-0123456789abcdef0',
    kind: 'spot-interruption-warning' as const,
    signal: { source: 'ec2-event' as const, detail: 'spot interruption warning (terminate)' },
    at: T0,
  };
  it.each<[string, Facts, string[]]>([
    [
      'spot warning (EC2, by instance id → providerID): idle runner replaced early',
      { ...idle, nodeSignals: [spot] },
      ['rule-6-warned-node delete-ephemeral-runner'],
    ],
    [
      'spot warning: busy runner marked at risk',
      { ...busy, nodeSignals: [spot] },
      ['rule-6-warned-node mark-at-risk'],
    ],
    [
      'Karpenter DisruptionTerminating on its node',
      withEvent(idle, {
        reason: 'DisruptionTerminating',
        message: 'Disrupting Node: Underutilized/Delete',
        component: 'karpenter',
        kind: 'Node',
        name: 'pool-github-runners-3-ogny9',
      }),
      ['rule-6-warned-node delete-ephemeral-runner'],
    ],
    [
      'a warning for another instance',
      { ...idle, nodeSignals: [{ ...spot, instanceId: 'i-0fff' }] },
      [],
    ],
    [
      'a tainted node (karpenter.sh/disrupted)',
      facts({
        pods: [pod()],
        ephemeralRunners: [er()],
        nodes: [node({ taints: [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }] })],
      }),
      ['rule-6-warned-node delete-ephemeral-runner'],
    ],
    [
      "Karpenter's SpotInterrupted on the busy runner's own pod",
      withEvent(busy, {
        reason: 'SpotInterrupted',
        message: 'Spot interruption warning was triggered',
        component: 'karpenter',
      }),
      ['rule-6-warned-node mark-at-risk'],
    ],
  ])('%s', (_, f, expected) => {
    expect(kinds(f, T0)).toEqual(expected);
  });

  it('a mark-at-risk names the warning and is keyed on the pod', () => {
    const [a] = decide({ ...busy, nodeSignals: [spot] }, DEFAULT_POLICY, T0).actions;
    expect(a?.target).toEqual({
      kind: 'mark-at-risk',
      cluster: CLUSTER,
      namespace: NS,
      runnerName: NAME,
      warning: 'spot-interruption-warning',
    });
    expect(a?.key).toBe(`mark-at-risk:${CLUSTER}:${NS}:${NAME}:uid-pod-${NAME}`);
  });
});

describe('rule 7: circuit breaker', () => {
  const p = policy(
    'rules: { circuitBreaker: { windowSeconds: 600, maxLossesPerScaleSet: 3, maxLossesPerCluster: 5 } }',
  );
  const now = T0 + 200_000;

  it.each<[string, Facts, number, number]>([
    ['under the threshold: every slot freed', evictedRunners(2, T0), 2, 0],
    ['at the scale-set threshold: trips, holds every delete', evictedRunners(3, T0), 0, 1],
    ['losses outside the window do not count', evictedRunners(3, T0 - 700_000), 3, 0],
  ])('%s', (_, f, deletes, trips) => {
    const d = decide(f, p, now);
    expect(d.actions.filter((a) => a.target.kind === 'delete-ephemeral-runner')).toHaveLength(
      deletes,
    );
    expect(d.actions.filter((a) => a.target.kind === 'trip-breaker')).toHaveLength(trips);
    if (trips > 0)
      expect(d.held.filter((h) => h.why.startsWith('circuit breaker open'))).toHaveLength(3);
  });

  it('trips per cluster across scale sets, and wakes when the window has passed', () => {
    const a = evictedRunners(2, T0, 'set-a');
    const b = evictedRunners(2, T0 + 1000, 'set-b');
    const c = evictedRunners(1, T0 + 2000, 'set-c');
    const f = {
      ...a,
      pods: [...a.pods, ...b.pods, ...c.pods],
      ephemeralRunners: [...a.ephemeralRunners, ...b.ephemeralRunners, ...c.ephemeralRunners],
    };
    const d = decide(f, p, now);
    expect(d.actions.map((x) => x.target)).toEqual([
      {
        kind: 'trip-breaker',
        cluster: CLUSTER,
        scaleSet: null,
        losses: 5,
        threshold: 5,
        windowSeconds: 600,
      },
    ]);
    expect(d.wakeAt).toBe(T0 + 600_000);
  });

  it('the alert itself is not destructive and is keyed once per trip', () => {
    const f = evictedRunners(3, T0);
    const first = decide(f, p, now).actions.find((x) => x.target.kind === 'trip-breaker');
    const later = decide(f, p, now + 60_000).actions.find((x) => x.target.kind === 'trip-breaker');
    expect(first?.key).toBe(later?.key);
    expect(first?.rule).toBe('rule-7-circuit-breaker');
  });
});
