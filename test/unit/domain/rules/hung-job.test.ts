import type { Action } from '../../../../functions/domain/model/action.js';
import { decide } from '../../../../functions/domain/decide/decide.js';
import type { ActionRecord, Facts } from '../../../../functions/domain/model/facts.js';
import {
  DEFAULT_POLICY,
  parsePolicy,
  type Policy,
} from '../../../../functions/domain/policy/policy.js';
import { cancelStep } from '../../../../functions/domain/decide/retry.js';
import { er, facts, job, node, pod, record, unwrap } from '../builders.js';
import { CLUSTER, NS, SCALE_SET, T0, iso } from '../fixtures.js';

const NAME = 'arc-runner-set-2fh9q-runner-tkvlz';
const OTHER = 'arc-runner-set-2fh9q-runner-other';
const policy = (yaml: string): Policy => unwrap(parsePolicy(yaml));
const S = 1000;

const erJob = {
  jobId: 'a3f0c1de-0000-4000-8000-000000000001',
  jobRepositoryName: 'acme/app',
  workflowRunId: 9_000_000_001,
  jobDisplayName: 'build',
};
const inProgress = job({ jobId: 401, status: 'in_progress', conclusion: null, completedAt: null });
/** runner-medic cached the ER's job fields five minutes before T0. */
const cache = (runnerName = NAME) => ({
  cluster: CLUSTER,
  namespace: NS,
  runnerName,
  scaleSet: SCALE_SET,
  runnerId: 42,
  job: { ...erJob, jobId: erJob.jobId, jobRequestId: 7, jobWorkflowRef: null },
  seenAt: T0 - 300 * S,
});
/**
 * The pod ARC re-created at T0 with the spent JIT config (actions-runner-controller#4588), Running
 * and Ready.
 */
function recreatedPod() {
  const p = pod({
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: iso(T0 + 5 * S) }],
  });
  return { ...p, metadata: { ...p.metadata, uid: 'uid-pod-new', creationTimestamp: T0 } };
}
const recreated: Facts = facts({
  jobs: [inProgress],
  pods: [recreatedPod()],
  ephemeralRunners: [er({ job: erJob })],
  erJobCache: [cache()],
  nodes: [node()],
});

/** Another job of the run, in progress on runner OTHER. */
const sibling = job({
  jobId: 402,
  name: 'integration',
  status: 'in_progress',
  conclusion: null,
  completedAt: null,
  runnerName: OTHER,
  runnerId: 43,
});

const rule4 = (f: Facts, now: number, p: Policy = DEFAULT_POLICY): Action[] =>
  decide(f, p, now).actions.filter((a) => a.rule === 'rule-4-hung-job');
const cancelBase = `cancel-run:acme/app:${inProgress.job.runId}:1`;
const forceBase = `force-cancel-run:acme/app:${inProgress.job.runId}:1`;
const cancelTry = (n: number, o: Partial<ActionRecord> = {}) =>
  record({
    key: `${cancelBase}:try:${n}`,
    kind: 'cancel-run',
    rule: 'rule-4-hung-job',
    jobIds: [401],
    ...o,
  });

describe('rule 4, the hard-kill fast path', () => {
  it('cancels the run of a job whose runner pod was re-created after it took the job, once the grace has passed', () => {
    expect(rule4(recreated, T0 + 20 * S)).toEqual([]);
    expect(decide(recreated, DEFAULT_POLICY, T0 + 20 * S).wakeAt).toBe(T0 + 30 * S);
    const [cancel] = rule4(recreated, T0 + 30 * S);
    expect(cancel?.key).toBe(`${cancelBase}:try:0`);
    expect(cancel?.target).toEqual({
      kind: 'cancel-run',
      repo: 'acme/app',
      installationId: 77,
      runId: inProgress.job.runId,
      runAttempt: 1,
      jobIds: [401],
      allowLiveJobs: false,
    });
    expect(cancel?.reason).toMatch(/re-created|spent JIT config/);
    expect(cancel?.dryRun).toBe(false);
  });

  it('leaves a healthy runner alone: its pod is the one that took the job', () => {
    // Its pod was created a minute before T0, the job fields first seen 30 s before T0.
    const healthy = {
      ...recreated,
      pods: [pod({ conditions: [] })],
      erJobCache: [{ ...cache(), seenAt: T0 - 30 * S }],
    };
    expect(rule4(healthy, T0 + 3600 * S)).toEqual([]);
  });

  it('cancels at once when the node is NotReady: the kubelet stopped reporting 40 s before', () => {
    const f = facts({
      jobs: [inProgress],
      pods: [pod()],
      ephemeralRunners: [er({ job: erJob })],
      erJobCache: [cache()],
      nodes: [node({ ready: 'Unknown' })],
    });
    expect(rule4(f, T0 + 1 * S).map((a) => a.target.kind)).toEqual(['cancel-run']);
  });

  it('waits for the lock while another job of the run runs on a live runner, unless the policy allows it', () => {
    const f: Facts = {
      ...recreated,
      jobs: [inProgress, sibling],
      pods: [...recreated.pods, pod({ name: OTHER })],
      ephemeralRunners: [...recreated.ephemeralRunners, er({ name: OTHER })],
    };
    const d = decide(f, DEFAULT_POLICY, T0 + 60 * S);
    expect(d.actions.filter((a) => a.rule === 'rule-4-hung-job')).toEqual([]);
    expect(d.held.map((h) => h.why).join('\n')).toMatch(
      /job 402 \(integration\).*still in progress on a live runner.*cancelWithLiveJobs/,
    );
    const optIn = policy('rules: { hungJob: { cancelWithLiveJobs: true } }');
    expect(rule4(f, T0 + 60 * S, optIn).map((a) => a.target)).toEqual([
      expect.objectContaining({ kind: 'cancel-run', jobIds: [401], allowLiveJobs: true }),
    ]);
  });

  it('asks for the runners of the run’s other jobs in progress before it cancels, once', () => {
    // The sibling's runner is unseen: the slice read only the subject's runner.
    const unseen: Facts = { ...recreated, jobs: [inProgress, sibling] };
    const asked = decide(unseen, DEFAULT_POLICY, T0 + 60 * S);
    expect(asked.needs).toEqual([
      { kind: 'runners-of-run', repo: 'acme/app', runId: inProgress.job.runId, runAttempt: 1 },
    ]);
    expect(asked.actions.filter((a) => a.rule === 'rule-4-hung-job')).toEqual([]);
    expect(asked.held).toEqual([]);
    // Decided again at once with them; and after retryIntervalSeconds should they not be read.
    expect(asked.wakeAt).toBe(T0 + 65 * S);
    // Before the grace has passed nothing is asked: the timer comes first.
    expect(decide(unseen, DEFAULT_POLICY, T0 + 20 * S).needs).toEqual([]);
    // Read and still unseen: it runs where runner-medic cannot see, so it counts as live.
    const read: Facts = { ...unseen, runnersOfRunsRead: [`acme/app#${inProgress.job.runId}#1`] };
    const after = decide(read, DEFAULT_POLICY, T0 + 60 * S);
    expect(after.needs).toEqual([]);
    expect(after.held.map((h) => h.why).join('\n')).toMatch(/job 402 .*still in progress/);
    // Read and found on a live runner: as before (the test above).
  });

  it('force-cancels forceCancelAfterSeconds after a cancel that left the job in progress', () => {
    const sent = { ...recreated, actions: [cancelTry(0, { finishedAt: T0 + 30 * S })] };
    expect(rule4(sent, T0 + 35 * S)).toEqual([]);
    expect(decide(sent, DEFAULT_POLICY, T0 + 35 * S).wakeAt).toBe(T0 + 40 * S);
    const [force] = rule4(sent, T0 + 40 * S);
    expect(force?.key).toBe(`${forceBase}:try:0`);
    expect(force?.target.kind).toBe('force-cancel-run');
  });

  it('carries on to the force-cancel after runner-medic itself deleted the dead runner', () => {
    const gone: Facts = {
      ...recreated,
      pods: [],
      ephemeralRunners: [],
      actions: [cancelTry(0, { finishedAt: T0 + 30 * S })],
    };
    expect(rule4(gone, T0 + 40 * S).map((a) => a.target.kind)).toEqual(['force-cancel-run']);
  });

  it('retries a refused cancel with a doubling backoff, then leaves the job to the lock', () => {
    const refused = (n: number, at: number) =>
      cancelTry(n, { outcome: 'retry-later', claimedAt: at, finishedAt: at });
    const once = { ...recreated, actions: [refused(0, T0 + 30 * S)] };
    expect(rule4(once, T0 + 34 * S)).toEqual([]);
    expect(rule4(once, T0 + 35 * S).map((a) => a.key)).toEqual([`${cancelBase}:try:1`]);
    const twice = { ...recreated, actions: [refused(0, T0 + 30 * S), refused(1, T0 + 35 * S)] };
    expect(rule4(twice, T0 + 44 * S)).toEqual([]);
    expect(rule4(twice, T0 + 45 * S).map((a) => a.key)).toEqual([`${cancelBase}:try:2`]);
    const short = policy('rules: { hungJob: { retryForSeconds: 10 } }');
    const d = decide(twice, short, T0 + 45 * S);
    expect(d.actions.filter((a) => a.rule === 'rule-4-hung-job')).toEqual([]);
    expect(d.held.map((h) => h.why).join('\n')).toMatch(/refused 2 tries/);
  });

  it('stops at a final answer (the run completed, a job moved on)', () => {
    const f = { ...recreated, actions: [cancelTry(0, { outcome: 'gave-up' })] };
    const d = decide(f, DEFAULT_POLICY, T0 + 60 * S);
    expect(d.actions.filter((a) => a.rule === 'rule-4-hung-job')).toEqual([]);
    expect(d.held.map((h) => h.why).join('\n')).toMatch(/fast path stopped/);
  });

  it('charges a re-run read twice once: the sweep reads it through its runner and its run', () => {
    const rerun = record({
      key: 'rerun:acme/app:9000000001:0:try:0',
      kind: 'rerun-failed-jobs',
      budgetKeys: ['budget:acme/app:9000000001:build'],
    });
    const readTwice = { ...recreated, actions: [rerun, { ...rerun }] };
    expect(rule4(readTwice, T0 + 30 * S).map((a) => a.key)).toEqual([`${cancelBase}:try:0`]);
  });

  it('takes the fast path only when rule 3 could re-run the job', () => {
    const spent = {
      ...recreated,
      actions: [
        record({
          key: 'rerun:acme/app:9000000001:0:try:0',
          kind: 'rerun-failed-jobs',
          budgetKeys: ['budget:acme/app:9000000001:build'],
        }),
        record({
          key: 'rerun:acme/app:9000000001:1:try:0',
          kind: 'rerun-failed-jobs',
          budgetKeys: ['budget:acme/app:9000000001:build'],
        }),
      ],
    };
    const d = decide(spent, DEFAULT_POLICY, T0 + 60 * S);
    expect(d.actions.filter((a) => a.rule === 'rule-4-hung-job')).toEqual([]);
    expect(d.held.map((h) => h.why).join('\n')).toMatch(/re-run budget of 2 already spent/);
    const noRerun = policy('rules: { rerunKilledJob: { enabled: false } }');
    expect(rule4(recreated, T0 + 60 * S, noRerun)).toEqual([]);
    expect(decide(recreated, noRerun, T0 + 60 * S).held.map((h) => h.why)).toContain(
      "fast path not taken: rule 3 (re-run killed jobs) is off; GitHub's lock will fail the job",
    );
    // An OOM kill is excluded from re-runs by default: cancelling would gain nothing.
    const oomKilled = facts({
      jobs: [inProgress],
      ephemeralRunners: [er({ job: erJob })],
      pods: [
        pod({
          phase: 'Failed',
          conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: iso(T0) }],
          containerStatuses: [
            { name: 'runner', state: { terminated: { reason: 'OOMKilled', exitCode: 137 } } },
          ],
        }),
      ],
      nodes: [node()],
    });
    expect(rule4(oomKilled, T0 + 60 * S)).toEqual([]);
    expect(decide(oomKilled, DEFAULT_POLICY, T0 + 60 * S).held.map((h) => h.why)).toContain(
      "fast path not taken: cause oom-killed is excluded from re-runs; GitHub's lock will fail the job",
    );
    const oomAllowed = policy('rules: { rerunKilledJob: { excludeCauses: [] } }');
    expect(rule4(oomKilled, T0 + 60 * S, oomAllowed).map((a) => a.target.kind)).toEqual([
      'cancel-run',
    ]);
  });

  it('keeps the rule switch and its dry run', () => {
    expect(rule4(recreated, T0 + 60 * S, policy('rules: { hungJob: { enabled: false } }'))).toEqual(
      [],
    );
    const [dry] = rule4(recreated, T0 + 60 * S, policy('rules: { hungJob: { dryRun: true } }'));
    expect(dry?.dryRun).toBe(true);
    // A dry-run cancel counts as sent: the dry run shows the force-cancel that would follow.
    const afterDry = {
      ...recreated,
      actions: [cancelTry(0, { outcome: 'dry-run', dryRun: true, finishedAt: T0 + 30 * S })],
    };
    expect(
      rule4(afterDry, T0 + 41 * S, policy('rules: { hungJob: { dryRun: true } }')).map((a) => [
        a.target.kind,
        a.dryRun,
      ]),
    ).toEqual([['force-cancel-run', true]]);
  });
});

describe('cancelStep', () => {
  const base = 'cancel-run:acme/app:1:1';
  const at = (n: number, outcome: ActionRecord['outcome'], t: number) =>
    record({ key: `${base}:try:${n}`, kind: 'cancel-run', outcome, claimedAt: t, finishedAt: t });
  it.each<[string, ActionRecord[], number, ReturnType<typeof cancelStep>]>([
    ['no try yet', [], T0, { state: 'go', key: `${base}:try:0`, attempt: 0 }],
    ['sent', [at(0, 'succeeded', T0)], T0, { state: 'sent', at: T0 }],
    ['unknown counts as sent', [at(0, 'unknown', T0)], T0, { state: 'sent', at: T0 }],
    ['refused, waiting', [at(0, 'retry-later', T0)], T0 + S, { state: 'wait', at: T0 + 5 * S }],
    [
      'refused twice, waiting twice as long',
      [at(0, 'failed', T0), at(1, 'retry-later', T0 + 5 * S)],
      T0 + 6 * S,
      { state: 'wait', at: T0 + 15 * S },
    ],
    [
      'final',
      [at(0, 'gave-up', T0)],
      T0,
      { state: 'stopped', why: `GitHub answered gave-up to ${base}:try:0` },
    ],
  ])('%s', (_, actions, now, expected) => {
    expect(cancelStep(actions, base, now, 5, 300)).toEqual(expected);
  });
});
