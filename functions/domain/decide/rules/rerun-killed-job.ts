import type { ActionScope, ActionTarget, RecoveryPath } from '../../model/action.js';
import { findRunnerLoss } from '../../classify/annotations.js';
import { runnerOfJob, type RunnerView } from '../../correlate/correlate.js';
import type { JobRecord } from '../../model/facts.js';
import { idempotencyKey, rerunBudgetKey, subKey } from '../../model/idempotency-key.js';
import { isoTime } from '../../model/iso-time.js';
import { describeCause, type Signal } from '../../model/loss.js';
import { effectiveFor, need, propose, runnerScope, wake, type RuleContext } from './context.js';
import { contradictsArcRunner } from '../../correlate/runner-guard.js';
import { retryState } from './retry.js';

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
  const runner = runnerOfJob(ctx.c, j);
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

function budgetUsed(ctx: RuleContext, key: string): number {
  return ctx.facts.actions.filter(
    (a) =>
      !a.dryRun &&
      a.budgetKeys.includes(key) &&
      (a.outcome === 'claimed' || a.outcome === 'succeeded'),
  ).length;
}

const budgetKeyOf = (j: JobRecord) =>
  rerunBudgetKey(j.repository.fullName, j.job.runId, j.job.name);

/** Rule 3 for one run: re-run its lost jobs (and fail-fast siblings) once the run completes. */
function rerunRun(ctx: RuleContext, jobs: JobRecord[]): void {
  const first = jobs[0];
  if (!first) return;
  const repo = first.repository.fullName;
  const runId = first.job.runId;
  const runs = ctx.facts.runs.filter(
    (r) => r.repository.fullName === repo && r.run.runId === runId,
  );
  const attempt = Math.max(
    ...jobs.map((j) => j.job.runAttempt),
    ...runs.map((r) => r.run.runAttempt),
  );
  const current = jobs.filter((j) => j.job.runAttempt === attempt && j.job.status === 'completed');
  const verdicts: Verdict[] = [
    ...current.filter((j) => ENDED.has(j.job.conclusion ?? '')).map((j) => verdict(ctx, j)),
    ...current
      .filter((j) => OWN_FAILURES.has(j.job.conclusion ?? ''))
      .map((j): Verdict => ({ kind: 'blocking', job: j, why: `ended ${j.job.conclusion ?? ''}` })),
  ];
  const lost = verdicts.filter((v) => v.kind === 'lost');
  const lead = lost[0];
  const unknown = verdicts.filter((v) => v.kind === 'unknown');
  const installationId = first.installationId;
  // Read the annotations of failed jobs that ran on our runners (to find a loss), and of every
  // failed job in a run with a loss (a genuine failure there rules out rerun-failed-jobs).
  for (const u of unknown)
    if (lead || runnerOfJob(ctx.c, u.job)?.arcOwned)
      need(ctx, { kind: 'annotations', repo, installationId, jobId: u.job.job.jobId });
  if (!lead || unknown.length > 0) return;

  const eff = effectiveFor(ctx, runnerScope(lead.runner, repo));
  const rules = eff.rules.rerunKilledJob;
  if (!rules.enabled) return;
  const scope: ActionScope = runnerScope(lead.runner, repo, lead.job.job.htmlUrl);
  const cause = lead.runner.loss?.cause ?? null;
  const signal = lead.runner.loss?.signal ?? lead.signal;
  const jobIds = lost.map((v) => v.job.job.jobId);
  const runRef = { repo, installationId, runId, runAttempt: attempt };

  const run = runs.find((r) => r.run.runAttempt === attempt);
  if (run?.run.status !== 'completed') {
    if (!run) need(ctx, { kind: 'run', repo, installationId, runId });
    propose(ctx, {
      rule: 'rerunKilledJob',
      key: idempotencyKey('await-run-completion', repo, runId, attempt),
      target: { kind: 'await-run-completion', jobIds, ...runRef },
      scope,
      cause,
      signal,
      reason: `run ${runId} attempt ${attempt} still running; re-run ${jobIds.join(', ')} once it completes`,
      budgetKeys: [],
    });
    return;
  }

  const siblings = verdicts.filter((v) => v.kind === 'sibling');
  const overBudget = [...lost, ...siblings].filter(
    (v) => budgetUsed(ctx, budgetKeyOf(v.job)) >= rules.budget,
  );
  const blocking = verdicts.filter((v) => v.kind === 'blocking').length + overBudget.length;
  const within = lost.filter((v) => !overBudget.includes(v));
  let target: ActionTarget;
  let budgetKeys: string[];
  if (blocking === 0) {
    const all = [...lost, ...siblings].map((v) => v.job);
    target = { kind: 'rerun-failed-jobs', ...runRef, jobIds: all.map((j) => j.job.jobId) };
    budgetKeys = [...new Set(all.map(budgetKeyOf))];
  } else {
    // rerun-failed-jobs would also re-run a genuine failure: re-run one lost job (and dependents).
    const one = (within[0] ?? lead).job;
    target = { kind: 'rerun-job', ...runRef, jobId: one.job.jobId };
    budgetKeys = [budgetKeyOf(one)];
  }
  const base = idempotencyKey('rerun', repo, runId, attempt);
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
        ? `run ${runId} attempt ${attempt} completed; jobs ${target.jobIds.join(', ')} lost their runner (${what}) or were cancelled with them: re-run failed jobs`
        : `run ${runId} attempt ${attempt} completed; job ${target.jobId} lost its runner (${what}); other failures are not runner losses: re-run this job only`,
    budgetKeys,
    recoveredBy: lead.recoveredBy,
  });
}

/** Rule 3: re-run jobs killed with their runner, one call per run, within the budget. */
export function rerunKilledJob(ctx: RuleContext): void {
  for (const [, jobs] of ctx.c.jobsByRun) rerunRun(ctx, jobs);
}
