import { decide } from '../../../../functions/domain/decide/decide.js';
import type { Facts, JobRecord } from '../../../../functions/domain/model/facts.js';
import { rerunBudgetKey } from '../../../../functions/domain/model/idempotency-key.js';
import { DEFAULT_POLICY } from '../../../../functions/domain/policy/policy.js';
import { remediationEvent } from '../../../../functions/engine/remediation-event.js';
import { RUN_ID, er, facts, job, record, run } from '../builders.js';
import { LOST_ANNOTATION, SHUTDOWN_ANNOTATION, T0 } from '../fixtures.js';

// Issue 23 item 1: `rerun-failed-jobs` retries every failed job of the run, and a per-job re-run
// leaves the other jobs' results in the new attempt, so a genuine failure carried over from an
// earlier attempt must keep runner-medic on `rerun-job` for every later loss too.

/** Runners of the known EphemeralRunnerSet `arc-runner-set-2fh9q` (its prefix and label). */
const E2E_RUNNER = 'arc-runner-set-2fh9q-runner-e2e01';
const OTHER_RUNNER = 'arc-runner-set-2fh9q-runner-int02';
const evicted = [{ annotation_level: 'failure', message: SHUTDOWN_ANNOTATION }];
const lostComm = [{ annotation_level: 'failure', message: LOST_ANNOTATION }];
const exit1 = [{ annotation_level: 'failure', message: 'Process completed with exit code 1.' }];

const lint = (o: Partial<JobRecord['job']> = {}, a: JobRecord['annotations'] = exit1) =>
  job({ jobId: 301, name: 'lint', runnerName: 'arc-runner-set-2fh9q-runner-lnt01', ...o }, a);
const e2e = (attempt: number, o: Partial<JobRecord['job']> = {}) =>
  job(
    { jobId: 400 + attempt, name: 'e2e', runAttempt: attempt, runnerName: E2E_RUNNER, ...o },
    evicted,
  );
const ourRerun = (attempt: number, jobId: number, name = 'e2e') =>
  record({
    key: `rerun:acme/app:${RUN_ID}:${attempt}:try:0`,
    kind: 'rerun-job',
    jobIds: [jobId],
    budgetKeys: [rerunBudgetKey('acme/app', RUN_ID, name)],
  });
const runs = (attempts: number) =>
  Array.from({ length: attempts }, (_, i) => run({ runAttempt: i + 1 }));

// One live EphemeralRunner makes the set arc-runner-set-2fh9q known, so its other runners are ARC's.
const decideNow = (o: Partial<Facts>) =>
  decide(facts({ ephemeralRunners: [er()], ...o }), DEFAULT_POLICY, T0 + 120_000);
const reruns = (o: Partial<Facts>) =>
  decideNow(o)
    .actions.filter((a) => a.target.kind === 'rerun-job' || a.target.kind === 'rerun-failed-jobs')
    .map((a) => ('jobId' in a.target ? `rerun-job ${a.target.jobId}` : `${a.target.kind}`));

describe('rule 3 beside a genuine failure, across attempts', () => {
  it('attempt 1: lint failed on its own, e2e was evicted: e2e alone', () => {
    expect(reruns({ jobs: [lint(), e2e(1)], runs: runs(1) })).toEqual(['rerun-job 401']);
  });

  it('attempt 2 (after re-running e2e alone): lint carries its failure over, so e2e alone again', () => {
    const d = decideNow({
      jobs: [lint(), e2e(1), e2e(2)],
      runs: runs(2),
      actions: [ourRerun(1, 401)],
    });
    const [a, ...rest] = d.actions;
    expect(rest).toEqual([]);
    expect(a?.target).toMatchObject({ kind: 'rerun-job', jobId: 402, runAttempt: 2 });
    expect(a?.budgetKeys).toEqual([rerunBudgetKey('acme/app', RUN_ID, 'e2e')]);
    expect(a?.reason).toContain('lint (failed with no runner-loss signal (genuine failure))');
    // The audit event says what the per-job re-run also does.
    if (!a) throw new Error('no re-run');
    const audit = remediationEvent(a, 'succeeded', 'done', T0).detail as { reason: string };
    expect(audit.reason).toContain(
      'POST .../actions/jobs/402/rerun, which also re-runs the jobs that depend on it',
    );
  });

  it('attempt 3 after two re-runs of e2e: its budget of 2 is spent, nothing more', () => {
    const d = decideNow({
      jobs: [lint(), e2e(1), e2e(2), e2e(3)],
      runs: runs(3),
      actions: [ourRerun(1, 401), ourRerun(2, 402)],
    });
    expect(d.actions.filter((a) => a.target.kind.startsWith('rerun'))).toEqual([]);
    expect(d.held.map((h) => h.kind)).toEqual(['rerun-job']);
  });

  it('a carried-over failure whose annotations are not read yet: asked for, and not killed meanwhile', () => {
    const d = decideNow({
      jobs: [lint({}, null), e2e(1), e2e(2)],
      runs: runs(2),
      actions: [ourRerun(1, 401)],
    });
    expect(d.needs).toContainEqual({
      kind: 'annotations',
      repo: 'acme/app',
      installationId: 77,
      jobId: 301,
    });
    expect(d.actions.map((a) => a.target)).toEqual([
      expect.objectContaining({ kind: 'rerun-job', jobId: 402 }),
    ]);
  });

  it('a carried-over success does not block: rerun-failed-jobs when every failure was killed', () => {
    const ok = lint({ conclusion: 'success' }, []);
    expect(
      reruns({ jobs: [ok, e2e(1), e2e(2)], runs: runs(2), actions: [ourRerun(1, 401)] }),
    ).toEqual(['rerun-failed-jobs']);
  });

  it('two killed jobs beside a genuine failure: one alone per attempt, the left-out one next', () => {
    const other = (o: Partial<JobRecord['job']> = {}) =>
      job({ jobId: 501, name: 'integration', runnerName: OTHER_RUNNER, ...o }, lostComm);
    // Attempt 1: e2e (newest first, then by order) is re-run alone; GitHub refuses a second
    // per-job re-run while the first one's attempt is in progress.
    expect(reruns({ jobs: [lint(), e2e(1), other()], runs: runs(1) })).toEqual(['rerun-job 401']);
    // Attempt 2 completed, e2e passed: integration, left out of it, is re-run alone now.
    expect(
      reruns({
        jobs: [lint(), e2e(1), e2e(2, { conclusion: 'success' }), other()],
        runs: runs(2),
        actions: [ourRerun(1, 401)],
      }),
    ).toEqual(['rerun-job 501']);
  });

  it('an execution runner-medic re-ran whose successor is unknown counts as not killed', () => {
    // e2e@1 was re-run by us at attempt 1, but the store holds no e2e@2 (its webhook was lost);
    // another job lost its runner in attempt 2: rerun-failed-jobs would retry e2e blindly.
    const integration = job(
      { jobId: 502, name: 'integration', runAttempt: 2, runnerName: OTHER_RUNNER },
      lostComm,
    );
    const d = decideNow({
      jobs: [e2e(1), integration],
      runs: runs(2),
      actions: [ourRerun(1, 401)],
    });
    expect(d.actions.map((a) => a.target)).toEqual([
      expect.objectContaining({ kind: 'rerun-job', jobId: 502 }),
    ]);
    expect(d.actions[0]?.reason).toContain('e2e (re-run already; its new execution is not known)');
  });
});
