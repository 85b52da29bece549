import { z } from 'zod';
import type { ActionScope, ActionTarget, RecoveryPath, RunRef } from '../../model/action.js';
import { findRunnerLoss } from '../../classify/annotations.js';
import { runnerOfJob, type RunnerView } from '../../correlate/correlate.js';
import type { JobRecord } from '../../model/facts.js';
import { idempotencyKey, rerunBudgetKey, subKey } from '../../model/idempotency-key.js';
import { isoTime } from '../../model/iso-time.js';
import { describeCause, lossKindSchema, type LossCause, type Signal } from '../../model/loss.js';
import { effectiveFor, need, propose, runnerScope, wake, type RuleContext } from '../context.js';
import { contradictsArcRunner } from '../../correlate/runner-guard.js';
import { retryState } from '../retry.js';
import { budgetSpent, defineRule, ruleSettings, seconds } from '../rule.js';

const CANCEL_KINDS = new Set(['cancel-run', 'force-cancel-run']);
const ENDED = new Set(['failure', 'cancelled']);
/** Conclusions `rerun-failed-jobs` would also retry but that are never a runner loss. */
const OWN_FAILURES = new Set(['timed_out', 'startup_failure', 'action_required']);

type Verdict =
  | { kind: 'lost'; job: JobRecord; runner: RunnerView; signal: Signal; recoveredBy: RecoveryPath }
  | { kind: 'sibling'; job: JobRecord }
  | { kind: 'unknown'; job: JobRecord }
  /** Failed for its own reasons, on a runner that is not ours, or for an excluded cause. */
  | { kind: 'blocking'; job: JobRecord; why: string };

function verdict(ctx: RuleContext, j: JobRecord): Verdict {
  const cancelledByUs = ctx.facts.actions.some(
    (a) =>
      CANCEL_KINDS.has(a.kind) &&
      a.jobIds.includes(j.job.jobId) &&
      (a.outcome === 'succeeded' || a.outcome === 'claimed'),
  );
  const anno = j.annotations ? findRunnerLoss(j.annotations) : null;
  if (!anno && !cancelledByUs) {
    if (j.job.conclusion === 'cancelled') return { kind: 'sibling', job: j };
    if (j.annotations === null) return { kind: 'unknown', job: j };
    return { kind: 'blocking', job: j, why: 'failed with no runner-loss signal (genuine failure)' };
  }
  const runner = runnerOfJob(ctx.correlation, j);
  if (!runner?.arcOwned || contradictsArcRunner(runner))
    return { kind: 'blocking', job: j, why: 'its runner is not a known ARC runner' };
  const scope = runnerScope(runner, j.repository.fullName);
  const excluded = effectiveFor(ctx, scope).rules.rerunKilledJob.excludeCauses;
  if (runner.loss && excluded.includes(runner.loss.cause.kind))
    return { kind: 'blocking', job: j, why: `cause ${runner.loss.cause.kind} is excluded` };
  const signal: Signal = anno
    ? { source: 'annotation', detail: anno.message }
    : {
        source: 'annotation',
        detail: 'run cancelled by runner-medic (rule 4) after its runner was lost',
      };
  const recoveredBy: RecoveryPath =
    cancelledByUs && j.job.conclusion === 'cancelled'
      ? 'fast-path'
      : anno?.signal === 'lost-communication'
        ? 'lock-expiry'
        : anno
          ? 'graceful'
          : 'fast-path';
  return { kind: 'lost', job: j, runner, signal, recoveredBy };
}

const budgetKeyOf = (j: JobRecord) =>
  rerunBudgetKey(j.repository.fullName, j.job.runId, j.job.name);

type RerunTarget = Extract<ActionTarget, { kind: 'rerun-failed-jobs' | 'rerun-job' }>;

/** What rule 3 knows of one run attempt with a lost job, for its proposals. */
interface LostRun {
  runRef: RunRef;
  scope: ActionScope;
  cause: LossCause | null;
  signal: Signal;
  /** The jobs that lost their runner. */
  jobIds: number[];
  lead: Extract<Verdict, { kind: 'lost' }>;
}

/** The verdict on each job of the run's current attempt that ended badly. */
function verdictsOf(ctx: RuleContext, jobs: JobRecord[], attempt: number): Verdict[] {
  const current = jobs.filter((j) => j.job.runAttempt === attempt && j.job.status === 'completed');
  return [
    ...current.filter((j) => ENDED.has(j.job.conclusion ?? '')).map((j) => verdict(ctx, j)),
    ...current
      .filter((j) => OWN_FAILURES.has(j.job.conclusion ?? ''))
      .map((j): Verdict => ({ kind: 'blocking', job: j, why: `ended ${j.job.conclusion ?? ''}` })),
  ];
}

/** Rule 3 for one run: re-run its lost jobs (and fail-fast siblings) once the run completes. */
function rerunRun(ctx: RuleContext, jobs: JobRecord[]): void {
  const first = jobs[0];
  if (!first) return;
  const repo = first.repository.fullName;
  const runId = first.job.runId;
  const { installationId } = first;
  const runs = ctx.facts.runs.filter(
    (r) => r.repository.fullName === repo && r.run.runId === runId,
  );
  const attempt = Math.max(
    ...jobs.map((j) => j.job.runAttempt),
    ...runs.map((r) => r.run.runAttempt),
  );
  const verdicts = verdictsOf(ctx, jobs, attempt);
  const lost = verdicts.filter((v) => v.kind === 'lost');
  const lead = lost[0];
  const unknown = verdicts.filter((v) => v.kind === 'unknown');
  // Read the annotations of failed jobs that ran on our runners (to find a loss), and of every
  // failed job in a run with a loss (a genuine failure there rules out rerun-failed-jobs).
  for (const u of unknown)
    if (lead || runnerOfJob(ctx.correlation, u.job)?.arcOwned)
      need(ctx, { kind: 'annotations', repo, installationId, jobId: u.job.job.jobId });
  if (!lead || unknown.length > 0) return;

  const rules = effectiveFor(ctx, runnerScope(lead.runner, repo)).rules.rerunKilledJob;
  if (!rules.enabled) return;
  const run: LostRun = {
    runRef: { repo, installationId, runId, runAttempt: attempt },
    scope: runnerScope(lead.runner, repo, lead.job.job.htmlUrl),
    cause: lead.runner.loss?.cause ?? null,
    signal: lead.runner.loss?.signal ?? lead.signal,
    jobIds: lost.map((v) => v.job.job.jobId),
    lead,
  };
  const record = runs.find((r) => r.run.runAttempt === attempt);
  if (record?.run.status !== 'completed') {
    if (!record) need(ctx, { kind: 'run', repo, installationId, runId });
    awaitCompletion(ctx, run);
    return;
  }
  const { target, budgetKeys } = rerunTarget(ctx, run, verdicts, rules.budget);
  proposeRerun(ctx, run, rules, target, budgetKeys);
}

/** The run is still going: a pending intent to re-run the lost jobs once it completes. */
function awaitCompletion(ctx: RuleContext, run: LostRun): void {
  const { repo, runId, runAttempt } = run.runRef;
  propose(ctx, {
    rule: 'rerunKilledJob',
    key: idempotencyKey('await-run-completion', repo, runId, runAttempt),
    target: { kind: 'await-run-completion', jobIds: run.jobIds, ...run.runRef },
    scope: run.scope,
    cause: run.cause,
    signal: run.signal,
    reason: `run ${runId} attempt ${runAttempt} still running; re-run ${run.jobIds.join(', ')} once it completes`,
    budgetKeys: [],
  });
}

/**
 * `rerun-failed-jobs` for the lost jobs and their cancelled siblings, unless a job failed for its
 * own reasons or is over its budget: `rerun-failed-jobs` would retry it too, so then one lost job
 * (and its dependents) is re-run with `rerun-job`.
 */
function rerunTarget(
  ctx: RuleContext,
  run: LostRun,
  verdicts: Verdict[],
  budget: number,
): { target: RerunTarget; budgetKeys: string[] } {
  const lost = verdicts.filter((v) => v.kind === 'lost');
  const siblings = verdicts.filter((v) => v.kind === 'sibling');
  const overBudget = [...lost, ...siblings].filter(
    (v) => budgetSpent(ctx.facts.actions, budgetKeyOf(v.job)) >= budget,
  );
  const blocking = verdicts.filter((v) => v.kind === 'blocking').length + overBudget.length;
  if (blocking === 0) {
    const all = [...lost, ...siblings].map((v) => v.job);
    return {
      target: { kind: 'rerun-failed-jobs', ...run.runRef, jobIds: all.map((j) => j.job.jobId) },
      budgetKeys: [...new Set(all.map(budgetKeyOf))],
    };
  }
  const one = (lost.find((v) => !overBudget.includes(v)) ?? run.lead).job;
  return {
    target: { kind: 'rerun-job', ...run.runRef, jobId: one.job.jobId },
    budgetKeys: [budgetKeyOf(one)],
  };
}

/** The re-run itself, under GitHub's refusals for now (retried) and for good (given up). */
function proposeRerun(
  ctx: RuleContext,
  run: LostRun,
  rules: { retryIntervalSeconds: number; retryForSeconds: number },
  target: RerunTarget,
  budgetKeys: string[],
): void {
  const { repo, runId, runAttempt } = run.runRef;
  const { scope, cause, signal } = run;
  const base = idempotencyKey('rerun', repo, runId, runAttempt);
  const st = retryState(ctx, base, rules.retryIntervalSeconds, rules.retryForSeconds);
  if (st.state === 'wait') {
    wake(ctx, st.at);
    propose(ctx, {
      rule: 'rerunKilledJob',
      key: subKey(base, 'retry-at', st.attempt),
      target: { kind: 'schedule-retry', retryOf: st.retryOf, at: st.at },
      scope,
      cause,
      signal,
      reason: `GitHub refused the re-run of run ${runId} for now; retry at ${isoTime(st.at)}`,
      budgetKeys: [],
    });
  }
  if (st.state !== 'go') return;
  const what = cause ? describeCause(cause) : signal.detail.split('.')[0];
  propose(ctx, {
    rule: 'rerunKilledJob',
    key: st.key,
    target,
    scope,
    cause,
    signal,
    reason:
      target.kind === 'rerun-failed-jobs'
        ? `run ${runId} attempt ${runAttempt} completed; jobs ${target.jobIds.join(', ')} lost their runner (${what}) or were cancelled with them: re-run failed jobs`
        : `run ${runId} attempt ${runAttempt} completed; job ${target.jobId} lost its runner (${what}); other failures are not runner losses: re-run this job only`,
    budgetKeys,
    recoveredBy: run.lead.recoveredBy,
  });
}

/**
 * Rule 3: re-run jobs killed with their runner (a runner-loss annotation, or runner-medic's own
 * rule-4 cancel), one call per run once it completes, within the job's re-run budget.
 */
export const rerunKilledJob = defineRule({
  number: 3,
  name: 'rerunKilledJob',
  id: 'rule-3-rerun-killed-job',
  settings: ruleSettings({
    /** Automatic re-runs per job (same run, same job name, across attempts). */
    budget: z.number().int().min(0).max(10),
    retryIntervalSeconds: z.number().int().min(1),
    /** Stop retrying `403 already running` after this long. */
    retryForSeconds: seconds,
    /** Loss causes that do not earn a re-run (an OOM kill is usually the job's own doing). */
    excludeCauses: z.array(lossKindSchema),
  }),
  defaults: {
    enabled: true,
    dryRun: false,
    budget: 2,
    retryIntervalSeconds: 30,
    retryForSeconds: 900,
    excludeCauses: ['oom-killed'],
  },
  budget: (settings) => settings.budget,
  decide(ctx: RuleContext): void {
    for (const [, jobs] of ctx.correlation.jobsByRun) rerunRun(ctx, jobs);
  },
});
