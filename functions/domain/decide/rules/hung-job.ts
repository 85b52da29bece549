import * as z from 'zod';
import type { ActionScope, RunRef } from '../../model/action.js';
import { runAttemptKey, runKey, runnerOfJob, type RunnerView } from '../../correlate/correlate.js';
import type { ActionRecord, JobRecord } from '../../model/facts.js';
import { idempotencyKey, rerunBudgetKey } from '../../model/idempotency-key.js';
import { isoTime } from '../../model/iso-time.js';
import { isProvenArcRunner } from '../../correlate/runner-guard.js';
import { effectiveFor, need, propose, runnerScope, wake, type RuleContext } from '../context.js';
import { deathEvidence, ranJob, type RunnerDeath } from '../runner-death.js';
import { cancelStep, SENT_OUTCOMES } from '../retry.js';
import { budgetSpent, defineRule, ruleSettings, seconds } from '../rule.js';
import { rerunKilledJob } from './rerun-killed-job.js';

interface Dead {
  job: JobRecord;
  runner: RunnerView;
  death: RunnerDeath;
  /** When the cancel may be sent: `since`, plus the grace when a graceful stop is possible. */
  due: number;
}

/** Our cancel of this job's run attempt, already sent: the fast path carries on from it. */
function cancelSentFor(ctx: RuleContext, j: JobRecord): ActionRecord | undefined {
  const base = idempotencyKey('cancel-run', j.repository.fullName, j.job.runId, j.job.runAttempt);
  return ctx.facts.actions.find(
    (a) =>
      a.key.startsWith(`${base}:try:`) &&
      SENT_OUTCOMES.has(a.outcome) &&
      a.jobIds.includes(j.job.jobId),
  );
}

/** Whether rule 3 could re-run this job once its run completes: otherwise cancelling gains nothing. */
function rerunWanted(ctx: RuleContext, d: Dead, scope: ActionScope): string | null {
  const rerun = effectiveFor(ctx, scope).rules.rerunKilledJob;
  if (!rerun.enabled) return 'rule 3 (re-run killed jobs) is off';
  const cause = d.runner.loss?.cause.kind;
  if (cause && rerun.excludeCauses.includes(cause))
    return `cause ${cause} is excluded from re-runs`;
  const key = rerunBudgetKey(d.job.repository.fullName, d.job.job.runId, d.job.job.name);
  const limit = rerunKilledJob.budget(rerun) ?? Infinity;
  if (budgetSpent(ctx.facts.actions, key) >= limit)
    return `re-run budget of ${limit} already spent on ${key}`;
  return null;
}

const ID = 'rule-4-hung-job';

const settings = ruleSettings({
  /**
   * Wait this long after the runner is confirmed dead: a runner stopped gracefully reports its
   * shutdown and GitHub concludes the job itself in 15–26 s (GAG, measured).
   */
  graceSeconds: seconds,
  /** Force-cancel when the run is still in progress this long after the cancel. */
  forceCancelAfterSeconds: seconds,
  /**
   * Cancel even while another job of the run is still in progress on a live runner. Cancelling a
   * run cancels every job in it, so by default runner-medic waits for GitHub's lock instead.
   */
  cancelWithLiveJobs: z.boolean(),
  /** A refused cancel (500, or 409 "re-run … not yet queued") is retried after this, doubling. */
  retryIntervalSeconds: z.number().int().min(1),
  /** Stop retrying refused cancels after this long; GitHub's lock then recovers the job. */
  retryForSeconds: seconds,
});

/**
 * Rule 4, the hard-kill fast path. A runner killed without its grace period (SIGKILL, a node
 * gone, a spot reclaim) never tells GitHub: its job stays `in_progress` until the lost-runner
 * lock lapses, ~576 s after its last renewal. When the live objects show the runner dead with
 * its job (runner-death.ts) for `graceSeconds`, and no other job of the run is still in progress
 * on a live runner (unless `cancelWithLiveJobs`), the run is cancelled, then force-cancelled
 * `forceCancelAfterSeconds` later if it is still in progress. Rule 3 re-runs it once it completes.
 * A refused cancel is retried with backoff; when the fast path cannot be taken, the lock remains.
 */
export const hungJob = defineRule({
  number: 4,
  name: 'hungJob',
  id: ID,
  settings,
  defaults: {
    enabled: true,
    dryRun: false,
    graceSeconds: 30,
    forceCancelAfterSeconds: 10,
    cancelWithLiveJobs: false,
    retryIntervalSeconds: 5,
    retryForSeconds: 300,
  },
  decide(ctx: RuleContext): void {
    for (const dead of deadJobsByAttempt(ctx).values()) fastPath(ctx, dead);
  },
});

/** Each run attempt's in-progress jobs whose runner the live objects show dead, earliest first. */
function deadJobsByAttempt(ctx: RuleContext): Map<string, Dead[]> {
  const byAttempt = new Map<string, Dead[]>();
  for (const j of ctx.facts.jobs) {
    if (j.job.status !== 'in_progress') continue;
    const v = runnerOfJob(ctx.correlation, j);
    if (!v?.arcOwned || !isProvenArcRunner(v) || !ranJob(v, j)) continue;
    const grace =
      effectiveFor(ctx, runnerScope(v, j.repository.fullName)).rules.hungJob.graceSeconds * 1000;
    const sent = cancelSentFor(ctx, j);
    const deaths: Dead[] = [
      ...deathEvidence(v, ctx.facts).map((death) => ({
        job: j,
        runner: v,
        death,
        due: death.since + (death.mayBeGraceful ? grace : 0),
      })),
      ...(sent
        ? [
            {
              job: j,
              runner: v,
              death: {
                since: sent.claimedAt,
                evidence: `runner-medic cancelled its run at ${isoTime(sent.claimedAt)}`,
                mayBeGraceful: false,
              },
              due: sent.claimedAt,
            },
          ]
        : []),
    ];
    const first = deaths.sort((a, b) => a.due - b.due)[0];
    if (!first) continue;
    const k = runAttemptKey(j.repository.fullName, j.job.runId, j.job.runAttempt);
    byAttempt.set(k, [...(byAttempt.get(k) ?? []), first]);
  }
  return byAttempt;
}

/** One run attempt whose dead jobs the fast path may cancel, and how to say why it does not. */
interface FastPath {
  dead: Dead[];
  lead: Dead;
  scope: ActionScope;
  rules: z.infer<typeof settings>;
  hold: (why: string, kind?: 'cancel-run' | 'force-cancel-run') => void;
}

function fastPath(ctx: RuleContext, dead: Dead[]): void {
  const lead = dead[0];
  if (!lead) return;
  const { job } = lead;
  const repo = job.repository.fullName;
  const { runId, runAttempt } = job.job;
  const scope = runnerScope(lead.runner, repo, job.job.htmlUrl);
  const rules = effectiveFor(ctx, scope).rules.hungJob;
  if (!rules.enabled) return;
  const hold = (why: string, kind: 'cancel-run' | 'force-cancel-run' = 'cancel-run'): void => {
    ctx.holds.push({
      key: idempotencyKey(kind, repo, runId, runAttempt),
      rule: ID,
      kind,
      scope,
      why,
    });
  };
  const due = Math.max(...dead.map((d) => d.due));
  if (ctx.now < due) {
    wake(ctx, due);
    return;
  }
  const path: FastPath = { dead, lead, scope, rules, hold };
  const noRerun = rerunNotWanted(ctx, path);
  if (noRerun) return hold(`fast path not taken: ${noRerun}`);
  if (askForOtherRunners(ctx, lead, ctx.now + rules.retryIntervalSeconds * 1000)) return;
  const live = liveJobBeside(ctx, path);
  if (live) return hold(`fast path not taken: ${live}`);
  cancelThenForce(ctx, path);
}

/**
 * A slice reads the runners of a run's other in-progress jobs only when asked: whether they still
 * run decides the cancel, and which jobs it names. Asks once a decision, when one of them is
 * unseen; true when it asked (the rules decide again with them, or at `retryAt` if they could not
 * be read in this invocation).
 */
function askForOtherRunners(ctx: RuleContext, lead: Dead, retryAt: number): boolean {
  const repo = lead.job.repository.fullName;
  const { runId, runAttempt } = lead.job.job;
  if (ctx.facts.runnersOfRunsRead.includes(runAttemptKey(repo, runId, runAttempt))) return false;
  const unseen = (ctx.correlation.jobsByRun.get(runKey(repo, runId)) ?? []).some(
    (s) =>
      s.job.runAttempt === runAttempt &&
      s.job.status === 'in_progress' &&
      s.job.runnerName !== null &&
      !ctx.correlation.byName.has(s.job.runnerName),
  );
  if (!unseen) return false;
  need(ctx, { kind: 'runners-of-run', repo, runId, runAttempt });
  wake(ctx, retryAt);
  return true;
}

/** Why cancelling this run gains nothing (rule 3 would not re-run a job), or null. */
function rerunNotWanted(ctx: RuleContext, { dead, lead }: FastPath): string | null {
  const repo = lead.job.repository.fullName;
  for (const d of dead) {
    const why = rerunWanted(ctx, d, runnerScope(d.runner, repo));
    if (why) return `${why}; GitHub's lock will fail the job`;
  }
  return null;
}

/** Why cancelling this run would cost a job still running on a live runner, or null. */
function liveJobBeside(ctx: RuleContext, { dead, lead, rules }: FastPath): string | null {
  const repo = lead.job.repository.fullName;
  const { runId, runAttempt } = lead.job.job;
  if (rules.cancelWithLiveJobs) return null;
  const jobIds = dead.map((d) => d.job.job.jobId);
  const live = (ctx.correlation.jobsByRun.get(runKey(repo, runId)) ?? []).find(
    (s) =>
      s.job.runAttempt === runAttempt &&
      s.job.status === 'in_progress' &&
      !jobIds.includes(s.job.jobId),
  );
  if (!live) return null;
  return `job ${live.job.jobId} (${live.job.name}) of run ${runId} is still in progress on a live runner, and cancelling the run would cancel it too (policy hungJob.cancelWithLiveJobs); GitHub's lock will fail job ${jobIds.join(', ')}`;
}

/** Cancel the run; once the cancel is sent, force-cancel it if it is still in progress later. */
function cancelThenForce(ctx: RuleContext, { dead, lead, scope, rules, hold }: FastPath): void {
  const { job, runner } = lead;
  const repo = job.repository.fullName;
  const { runId, runAttempt } = job.job;
  const jobIds = dead.map((d) => d.job.job.jobId);
  const runRef: RunRef = { repo, installationId: job.installationId, runId, runAttempt };
  const target = { ...runRef, jobIds, allowLiveJobs: rules.cancelWithLiveJobs };
  const evidence = dead.map((d) => d.death.evidence).join('; ');
  const since = Math.max(...dead.map((d) => d.death.since));
  const base = {
    rule: 'hungJob' as const,
    scope,
    cause: runner.loss?.cause ?? null,
    signal: runner.loss?.signal ?? { source: 'listing' as const, detail: evidence },
    budgetKeys: [],
  };
  const retry = [ctx.now, rules.retryIntervalSeconds, rules.retryForSeconds] as const;
  const cancel = cancelStep(
    ctx.facts.actions,
    idempotencyKey('cancel-run', repo, runId, runAttempt),
    ...retry,
  );
  if (cancel.state === 'stopped') return hold(`fast path stopped: ${cancel.why}`);
  if (cancel.state === 'wait') return wake(ctx, cancel.at);
  if (cancel.state === 'go') {
    // Decide again when a force-cancel would be due, or a refused cancel retried.
    wake(ctx, ctx.now + Math.min(rules.forceCancelAfterSeconds, rules.retryIntervalSeconds) * 1000);
    wake(ctx, ctx.now + rules.forceCancelAfterSeconds * 1000);
    propose(ctx, {
      ...base,
      key: cancel.key,
      target: { kind: 'cancel-run', ...target },
      reason: `job ${jobIds.join(', ')} still in progress, its runner dead since ${isoTime(since)} (${evidence}): cancel run ${runId} rather than wait for GitHub's lost-runner lock${cancel.attempt > 0 ? ` (try ${cancel.attempt + 1})` : ''}`,
    });
    return;
  }
  const forceDue = cancel.at + rules.forceCancelAfterSeconds * 1000;
  if (ctx.now < forceDue) {
    wake(ctx, forceDue);
    return;
  }
  const force = cancelStep(
    ctx.facts.actions,
    idempotencyKey('force-cancel-run', repo, runId, runAttempt),
    ...retry,
  );
  if (force.state === 'stopped') return hold(`fast path stopped: ${force.why}`, 'force-cancel-run');
  if (force.state === 'wait') return wake(ctx, force.at);
  if (force.state === 'sent') return;
  wake(ctx, ctx.now + rules.retryIntervalSeconds * 1000);
  propose(ctx, {
    ...base,
    key: force.key,
    target: { kind: 'force-cancel-run', ...target },
    reason: `run ${runId} still in progress ${rules.forceCancelAfterSeconds} s after its cancel, job ${jobIds.join(', ')} on a dead runner: force-cancel${force.attempt > 0 ? ` (try ${force.attempt + 1})` : ''}`,
  });
}
