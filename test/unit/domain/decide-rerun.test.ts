import { decide } from '../../../functions/domain/decide/decide.js';
import type { Facts, JobRecord } from '../../../functions/domain/model/facts.js';
import { rerunBudgetKey } from '../../../functions/domain/model/idempotency-key.js';
import {
  DEFAULT_POLICY,
  parsePolicy,
  type Policy,
} from '../../../functions/domain/policy/policy.js';
import { RUN_ID, facts, job, pod, record, run, unwrap, withEvent } from './builders.js';
import { CLUSTER, LOST_ANNOTATION, NS, SHUTDOWN_ANNOTATION, T0 } from './fixtures.js';

const NAME = 'arc-runner-set-2fh9q-runner-tkvlz';
const lostAnno = [{ annotation_level: 'failure', message: SHUTDOWN_ANNOTATION, path: '.github' }];
const genuineAnno = [
  { annotation_level: 'failure', message: 'Process completed with exit code 1.', path: '.github' },
];
const policy = (yaml: string): Policy => unwrap(parsePolicy(yaml));

/** The runner evicted by Karpenter mid-job, its job fields cached from the EphemeralRunner. */
const karpenterKilled = (o: Partial<Facts> = {}): Facts =>
  withEvent(
    facts({
      erJobCache: [
        {
          cluster: CLUSTER,
          namespace: NS,
          runnerName: NAME,
          scaleSet: 'arc-runner-set',
          runnerId: 42,
          job: {
            jobId: 'guid-1',
            jobRequestId: 7,
            jobRepositoryName: 'acme/app',
            jobWorkflowRef: 'acme/app/.github/workflows/ci.yml@refs/heads/main',
            workflowRunId: RUN_ID,
            jobDisplayName: 'build',
          },
          seenAt: T0 - 500_000,
        },
      ],
      ...o,
    }),
    {
      reason: 'Evicted',
      message: 'Evicted pod: Underutilized',
      component: 'karpenter',
      at: T0 - 60_000,
    },
  );

const lostJob = job({ jobId: 101 }, lostAnno);
const summary = (f: Facts, now = T0 + 120_000, p: Policy = DEFAULT_POLICY) => {
  const d = decide(f, p, now);
  return d.actions.map((a) => {
    const t = a.target;
    const ids = 'jobIds' in t ? ` ${t.jobIds.join(',')}` : 'jobId' in t ? ` ${t.jobId}` : '';
    return `${t.kind}${ids}${a.dryRun ? ' (dry-run)' : ''}`;
  });
};

describe('rule 3: re-run a killed job', () => {
  it.each<[string, Partial<Facts>, string[]]>([
    [
      'lost job, run still in progress: a pending intent',
      { jobs: [lostJob], runs: [run({ status: 'in_progress', conclusion: null })] },
      ['await-run-completion 101'],
    ],
    [
      'lost job, run completed: re-run failed jobs',
      { jobs: [lostJob], runs: [run()] },
      ['rerun-failed-jobs 101'],
    ],
    [
      'a genuine failure is never re-run',
      { jobs: [job({ jobId: 102 }, genuineAnno)], runs: [run()] },
      [],
    ],
    [
      'a warning-level loss annotation is not a loss',
      {
        jobs: [
          job({ jobId: 103 }, [{ annotation_level: 'warning', message: SHUTDOWN_ANNOTATION }]),
        ],
        runs: [run()],
      },
      [],
    ],
    [
      'lost job and a fail-fast sibling cancelled with it: one call for both',
      {
        jobs: [
          lostJob,
          job({ jobId: 104, name: 'test (2)', conclusion: 'cancelled', runnerName: null }, []),
        ],
        runs: [run()],
      },
      ['rerun-failed-jobs 101,104'],
    ],
    [
      'two jobs killed in the same run: one call',
      {
        jobs: [
          lostJob,
          job({ jobId: 105, name: 'lint' }, [
            { annotation_level: 'failure', message: LOST_ANNOTATION },
          ]),
        ],
        runs: [run()],
      },
      ['rerun-failed-jobs 101,105'],
    ],
    [
      'a lost job beside a genuine failure: re-run only the lost one',
      {
        jobs: [lostJob, job({ jobId: 106, name: 'unit', runnerName: 'other-runner' }, genuineAnno)],
        runs: [run()],
      },
      ['rerun-job 101'],
    ],
    [
      'a lost job beside a timed-out one: never rerun-failed-jobs',
      {
        jobs: [
          lostJob,
          job({ jobId: 114, name: 'e2e', conclusion: 'timed_out', runnerName: 'other' }, []),
        ],
        runs: [run()],
      },
      ['rerun-job 101'],
    ],
    [
      'a successful run: nothing',
      {
        jobs: [job({ jobId: 107, conclusion: 'success' }, [])],
        runs: [run({ conclusion: 'success' })],
      },
      [],
    ],
    [
      'a killed job a later attempt left out (no newer execution): awaited with that attempt',
      { jobs: [lostJob], runs: [run(), run({ runAttempt: 2, status: 'in_progress' })] },
      ['await-run-completion 101'],
    ],
    [
      'a job of an older attempt, re-run since: nothing',
      {
        jobs: [lostJob, job({ jobId: 115, runAttempt: 2, conclusion: 'success' }, [])],
        runs: [run(), run({ runAttempt: 2, conclusion: 'success' })],
      },
      [],
    ],
    [
      'lost on a runner runner-medic does not know: nothing',
      { jobs: [job({ jobId: 108, runnerName: 'i-0abc-ec2-runner' }, lostAnno)], runs: [run()] },
      [],
    ],
    [
      'lost on an unseen runner of a known EphemeralRunnerSet serving its label',
      {
        jobs: [job({ jobId: 112, runnerName: 'arc-runner-set-2fh9q-runner-qqqqq' }, lostAnno)],
        runs: [run()],
      },
      ['rerun-failed-jobs 112'],
    ],
    [
      'same prefix but the job asked for another scale set: nothing',
      {
        jobs: [
          job(
            { jobId: 113, runnerName: 'arc-runner-set-2fh9q-runner-qqqqq', labels: ['gpu'] },
            lostAnno,
          ),
        ],
        runs: [run()],
      },
      [],
    ],
  ])('%s', (_, o, expected) => {
    expect(summary(karpenterKilled(o))).toEqual(expected);
  });

  it('asks for the annotations of a failed job beside a loss, and until then counts it not killed', () => {
    const d = decide(
      karpenterKilled({ jobs: [lostJob, job({ jobId: 109, name: 'unit' }, null)], runs: [run()] }),
      DEFAULT_POLICY,
      T0 + 120_000,
    );
    expect(d.actions.map((a) => a.target)).toEqual([
      expect.objectContaining({ kind: 'rerun-job', jobId: 101 }),
    ]);
    expect(d.actions[0]?.reason).toContain('unit (annotations not read)');
    expect(d.needs.filter((n) => n.kind === 'annotations')).toEqual([
      { kind: 'annotations', repo: 'acme/app', installationId: 77, jobId: 109 },
    ]);
  });

  it.each([
    ['on a known ARC runner: asks for them', NAME, true],
    ['on a runner runner-medic does not know: does not', 'i-0abc-ec2-runner', false],
  ])('a failed job without annotations %s', (_, runnerName, asks) => {
    const d = decide(
      karpenterKilled({ jobs: [job({ jobId: 111, runnerName }, null)], runs: [run()] }),
      DEFAULT_POLICY,
      T0 + 120_000,
    );
    expect(d.actions).toEqual([]);
    expect(d.needs.some((n) => n.kind === 'annotations' && n.jobId === 111)).toBe(asks);
  });

  it('carries the cause and signal from the cluster, the job URL, and a reason', () => {
    const [a] = decide(
      karpenterKilled({ jobs: [lostJob], runs: [run()] }),
      DEFAULT_POLICY,
      T0 + 120_000,
    ).actions;
    expect(a).toMatchObject({
      rule: 'rule-3-rerun-killed-job',
      key: `rerun:acme/app:${RUN_ID}:1:try:0`,
      cause: { kind: 'api-eviction', by: 'karpenter', karpenterReason: 'consolidation' },
      signal: { source: 'pod-event' },
      scope: { cluster: CLUSTER, repo: 'acme/app', jobUrl: lostJob.job.htmlUrl, runnerName: NAME },
      target: {
        kind: 'rerun-failed-jobs',
        repo: 'acme/app',
        installationId: 77,
        runId: RUN_ID,
        runAttempt: 1,
      },
      budgetKeys: [rerunBudgetKey('acme/app', RUN_ID, 'build')],
    });
    expect(a?.reason).toMatch(/re-run failed jobs/);
  });

  describe('budget, across attempts (a re-run lost again counts against the same budget)', () => {
    const prior = (attempt: number): Facts['actions'][number] =>
      record({
        key: `rerun:acme/app:${RUN_ID}:${attempt}:try:0`,
        kind: 'rerun-failed-jobs',
        budgetKeys: [rerunBudgetKey('acme/app', RUN_ID, 'build')],
      });
    const attemptJob = (n: number): JobRecord => job({ jobId: 200 + n, runAttempt: n }, lostAnno);
    it.each<[number, number, string[]]>([
      [2, 1, ['rerun-failed-jobs 202']],
      [3, 2, []],
    ])('attempt %d after %d re-runs → %j', (attempt, reruns, expected) => {
      const actions = Array.from({ length: reruns }, (_, i) => prior(i + 1));
      const f = karpenterKilled({
        jobs: [attemptJob(attempt)],
        runs: [run({ runAttempt: attempt })],
        actions,
      });
      const d = decide(f, DEFAULT_POLICY, T0 + 120_000);
      expect(summary(f)).toEqual(expected);
      if (expected.length === 0)
        expect(d.held.map((h) => h.why)).toContain(
          `re-run budget of 2 exhausted for ${rerunBudgetKey('acme/app', RUN_ID, 'build')}`,
        );
    });

    it('two lost jobs of the same name in one run charge their slot once', () => {
      const p = policy('rules: { rerunKilledJob: { budget: 1 } }');
      const twins = [job({ jobId: 120 }, lostAnno), job({ jobId: 121 }, lostAnno)];
      const [a, ...rest] = decide(
        karpenterKilled({ jobs: twins, runs: [run()] }),
        p,
        T0 + 120_000,
      ).actions;
      expect(rest).toEqual([]);
      expect(a?.target).toMatchObject({ kind: 'rerun-failed-jobs', jobIds: [120, 121] });
      expect(a?.budgetKeys).toEqual([rerunBudgetKey('acme/app', RUN_ID, 'build')]);
    });

    it('a per-scale-set budget of 0 holds every re-run', () => {
      const p = policy(
        'scaleSets: { arc-runner-set: { rules: { rerunKilledJob: { budget: 0 } } } }',
      );
      expect(summary(karpenterKilled({ jobs: [lostJob], runs: [run()] }), T0 + 120_000, p)).toEqual(
        [],
      );
    });

    it('dry-run re-runs are not charged to the budget', () => {
      const dry = { ...prior(1), dryRun: true, outcome: 'dry-run' as const };
      const f = karpenterKilled({
        jobs: [attemptJob(2)],
        runs: [run({ runAttempt: 2 })],
        actions: [dry, { ...dry, key: 'rerun:x:try:0' }],
      });
      expect(summary(f)).toEqual(['rerun-failed-jobs 202']);
    });
  });

  describe('GitHub refusals', () => {
    const tried = (outcome: 'retry-later' | 'gave-up' | 'failed', at = T0 + 60_000) =>
      record({
        key: `rerun:acme/app:${RUN_ID}:1:try:0`,
        kind: 'rerun-failed-jobs',
        outcome,
        claimedAt: at,
        finishedAt: at,
      });
    it.each<[string, Facts['actions'], number, string[], number | null]>([
      [
        '403 already running: a timer as data, and wake me then',
        [tried('retry-later')],
        T0 + 70_000,
        ['schedule-retry'],
        T0 + 90_000,
      ],
      [
        '403 already running: retried once the interval passed',
        [tried('retry-later')],
        T0 + 90_000,
        ['rerun-failed-jobs 101'],
        null,
      ],
      [
        'a 5xx failure is retried the same way',
        [tried('failed')],
        T0 + 90_000,
        ['rerun-failed-jobs 101'],
        null,
      ],
      ['other 403 (over a month ago): give up', [tried('gave-up')], T0 + 90_000, [], null],
      [
        'already running for longer than retryForSeconds: give up',
        [
          tried('retry-later', T0),
          { ...tried('retry-later', T0 + 890_000), key: `rerun:acme/app:${RUN_ID}:1:try:1` },
        ],
        T0 + 950_000,
        [],
        null,
      ],
      [
        'succeeded: done',
        [
          tried('retry-later'),
          {
            ...tried('retry-later'),
            key: `rerun:acme/app:${RUN_ID}:1:try:1`,
            outcome: 'succeeded',
          },
        ],
        T0 + 950_000,
        [],
        null,
      ],
    ])('%s', (_, actions, now, expected, wakeAt) => {
      const f = karpenterKilled({ jobs: [lostJob], runs: [run()], actions });
      const d = decide(f, DEFAULT_POLICY, now);
      expect(summary(f, now)).toEqual(expected);
      if (wakeAt !== null) expect(d.wakeAt).toBe(wakeAt);
    });

    it('the retry has its own key', () => {
      const f = karpenterKilled({
        jobs: [lostJob],
        runs: [run()],
        actions: [tried('retry-later')],
      });
      expect(decide(f, DEFAULT_POLICY, T0 + 90_000).actions[0]?.key).toBe(
        `rerun:acme/app:${RUN_ID}:1:try:1`,
      );
    });
  });

  describe('policy', () => {
    it.each<[string, Policy, string[]]>([
      ['repo not allowed', policy('allow: { repositories: [other/*] }'), []],
      ['org allowed', policy('allow: { repositories: [acme/*] }'), ['rerun-failed-jobs 101']],
      ['dry run', policy('dryRun: true'), ['rerun-failed-jobs 101 (dry-run)']],
      ['rule off', policy('rules: { rerunKilledJob: { enabled: false } }'), []],
    ])('%s', (_, p, expected) => {
      expect(summary(karpenterKilled({ jobs: [lostJob], runs: [run()] }), T0 + 120_000, p)).toEqual(
        expected,
      );
    });

    it('an OOM-killed runner is excluded by default, and can be included', () => {
      const oomPod = pod({
        phase: 'Failed',
        containerStatuses: [
          { name: 'runner', state: { terminated: { reason: 'OOMKilled', exitCode: 137 } } },
        ],
      });
      const f = facts({
        pods: [oomPod],
        // ARC has deleted the EphemeralRunner; its runner id and job were cached when first seen.
        erJobCache: [
          {
            cluster: CLUSTER,
            namespace: NS,
            runnerName: oomPod.metadata.name,
            scaleSet: 'arc-runner-set',
            runnerId: 42,
            job: {
              jobId: null,
              jobRequestId: 7,
              jobRepositoryName: 'acme/app',
              jobWorkflowRef: null,
              workflowRunId: RUN_ID,
              jobDisplayName: 'build',
            },
            seenAt: T0 - 300_000,
          },
        ],
        jobs: [job({ jobId: 110 }, [{ annotation_level: 'failure', message: LOST_ANNOTATION }])],
        runs: [run()],
      });
      expect(summary(f)).toEqual([]);
      expect(
        summary(f, T0 + 120_000, policy('rules: { rerunKilledJob: { excludeCauses: [] } }')),
      ).toEqual(['rerun-failed-jobs 110']);
    });
  });
});
