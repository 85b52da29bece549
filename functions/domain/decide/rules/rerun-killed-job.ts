import * as z from 'zod';
import {
  RERUN_KINDS,
  type ActionScope,
  type ActionTarget,
  type RecoveryPath,
  type RunRef,
} from '../../model/action.js';
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
/** Outcomes of a re-run of ours after which GitHub may have started the next attempt. */
const TOOK_EFFECT = new Set(['succeeded', 'claimed', 'unknown']);

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

/**
 * Each job's executions at the latest attempt (up to `attempt`) that has one. A per-job re-run
 * leaves the other jobs out of the new attempt, and they keep their previous result
 * (docs.github.com, "Re-running workflows and jobs"): `rerun-failed-jobs` on this attempt would
 * retry a failure they carry over.
 */
function latestExecutions(jobs: JobRecord[], attempt: number): JobRecord[] {
  const latest = new Map<string, number>();
  for (const j of jobs)
    if (j.job.runAttempt <= attempt)
      latest.set(j.job.name, Math.max(j.job.runAttempt, latest.get(j.job.name) ?? 0));
  return jobs.filter((j) => latest.get(j.job.name) === j.job.runAttempt);
}

/** A re-run of ours covered this execution, yet no newer one is known: judge it not killed. */
function rerunByUs(ctx: RuleContext, j: JobRecord): boolean {
  return ctx.facts.actions.some(
    (a) =>
      RERUN_KINDS.has(a.kind) &&
      !a.dryRun &&
      TOOK_EFFECT.has(a.outcome) &&
      a.jobIds.includes(j.job.jobId),
  );
}

/** The verdict on each job of the run, as of this attempt, that ended badly: newest first. */
function verdictsOf(ctx: RuleContext, jobs: JobRecord[], attempt: number): Verdict[] {
  const current = latestExecutions(jobs, attempt)
    .filter((j) => j.job.status === 'completed')
    .sort((a, b) => b.job.runAttempt - a.job.runAttempt);
  return current.flatMap((j): Verdict[] => {
    const conclusion = j.job.conclusion ?? '';
    if (OWN_FAILURES.has(conclusion))
      return [{ kind: 'blocking', job: j, why: `ended ${conclusion}` }];
    if (!ENDED.has(conclusion)) return [];
    if (j.job.runAttempt < attempt && rerunByUs(ctx, j))
      return [{ kind: 'blocking', job: j, why: 're-run already; its new execution is not known' }];
    return [verdict(ctx, j)];
  });
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
  // failed job in a run with a loss (a genuine failure there rules out rerun-failed-jobs). Until
  // they are read, such a job counts as not killed.
  for (const u of unknown)
    if (lead || runnerOfJob(ctx.correlation, u.job)?.arcOwned)
      need(ctx, { kind: 'annotations', repo, installationId, jobId: u.job.job.jobId });
  if (!lead) return;

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
  proposeRerun(ctx, run, rules, rerunTarget(ctx, run, verdicts, rules.budget));
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
 * `rerun-failed-jobs` for the lost jobs and their cancelled siblings, only when every other failed
 * job of the attempt was found killed too: it retries every failed job, a genuine failure, one
 * not yet judged or one over its budget included. Otherwise one lost job is re-run alone with
 * `rerun-job` (GitHub re-runs its dependents with it); the others follow on later attempts.
 */
function rerunTarget(
  ctx: RuleContext,
  run: LostRun,
  verdicts: Verdict[],
  budget: number,
): { target: RerunTarget; budgetKeys: string[]; notKilled: string[] } {
  const lost = verdicts.filter((v) => v.kind === 'lost');
  const siblings = verdicts.filter((v) => v.kind === 'sibling');
  const overBudget = [...lost, ...siblings].filter(
    (v) => budgetSpent(ctx.facts.actions, budgetKeyOf(v.job)) >= budget,
  );
  const notKilled = [
    ...verdicts.flatMap((v) =>
      v.kind === 'blocking'
        ? [`${v.job.job.name} (${v.why})`]
        : v.kind === 'unknown'
          ? [`${v.job.job.name} (annotations not read)`]
          : [],
    ),
    ...overBudget.map((v) => `${v.job.job.name} (re-run budget spent)`),
  ];
  if (notKilled.length === 0) {
    const all = [...lost, ...siblings].map((v) => v.job);
    return {
      target: { kind: 'rerun-failed-jobs', ...run.runRef, jobIds: all.map((j) => j.job.jobId) },
      budgetKeys: [...new Set(all.map(budgetKeyOf))],
      notKilled,
    };
  }
  const one = (lost.find((v) => !overBudget.includes(v)) ?? run.lead).job;
  return {
    target: { kind: 'rerun-job', ...run.runRef, jobId: one.job.jobId },
    budgetKeys: [budgetKeyOf(one)],
    notKilled,
  };
}

/** The re-run itself, under GitHub's refusals for now (retried) and for good (given up). */
function proposeRerun(
  ctx: RuleContext,
  run: LostRun,
  rules: { retryIntervalSeconds: number; retryForSeconds: number },
  { target, budgetKeys, notKilled }: ReturnType<typeof rerunTarget>,
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
        : `run ${runId} attempt ${runAttempt} completed; job ${target.jobId} lost its runner (${what}); not found killed: ${notKilled.join(', ')}, which rerun-failed-jobs would retry too: re-run job ${target.jobId} alone (POST .../actions/jobs/${target.jobId}/rerun, which also re-runs the jobs that depend on it)`,
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
