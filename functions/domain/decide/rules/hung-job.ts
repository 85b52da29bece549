import type { ActionScope, RunRef } from '../../model/action.js';
import { runKey, runnerOfJob, type RunnerView } from '../../correlate/correlate.js';
import type { ActionRecord, JobRecord } from '../../model/facts.js';
import { idempotencyKey, rerunBudgetKey, subKey } from '../../model/idempotency-key.js';
import { isoTime } from '../../model/iso-time.js';
import { RULES } from '../../model/action.js';
import { isProvenArcRunner } from '../../correlate/runner-guard.js';
import { effectiveFor, propose, runnerScope, wake, type RuleContext } from './context.js';
import type { Rules } from '../../policy/policy.js';
import { deathEvidence, ranJob, type RunnerDeath } from './runner-death.js';

/** Outcomes after which a cancel is taken to have been sent (an `unknown` one may have acted). */
const SENT = new Set(['claimed', 'succeeded', 'unknown', 'dry-run']);
/** Outcomes after which a refused cancel is tried again (500 Failed to cancel, 409 not yet queued). */
const RETRY = new Set(['retry-later', 'failed']);

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
      a.key.startsWith(`${base}:try:`) && SENT.has(a.outcome) && a.jobIds.includes(j.job.jobId),
  );
}

export type CancelStep =
  | { state: 'go'; key: string; attempt: number }
  | { state: 'sent'; at: number }
  | { state: 'wait'; at: number }
  | { state: 'stopped'; why: string };

/**
 * Where a cancel (or force-cancel) of one run attempt stands. Its tries are keyed `<base>:try:<n>`;
 * a refused try is retried after `intervalSeconds`, doubling, for `forSeconds` from the first.
 */
export function cancelStep(
  actions: readonly ActionRecord[],
  base: string,
  now: number,
  intervalSeconds: number,
  forSeconds: number,
): CancelStep {
  const prefix = `${base}:try:`;
  const tries = actions
    .filter((a) => a.key.startsWith(prefix))
    .map((a) => ({ a, n: Number(a.key.slice(prefix.length)) }))
    .filter((t) => Number.isInteger(t.n))
    .sort((x, y) => x.n - y.n);
  const first = tries[0];
  const last = tries[tries.length - 1];
  if (!first || !last) return { state: 'go', key: subKey(base, 'try', 0), attempt: 0 };
  const sent = tries.find((t) => SENT.has(t.a.outcome));
  if (sent) return { state: 'sent', at: sent.a.finishedAt ?? sent.a.claimedAt };
  if (!RETRY.has(last.a.outcome))
    return { state: 'stopped', why: `GitHub answered ${last.a.outcome} to ${last.a.key}` };
  const at =
    (last.a.finishedAt ?? last.a.claimedAt) +
    intervalSeconds * 1000 * 2 ** Math.min(tries.length - 1, 10);
  if (at > first.a.claimedAt + forSeconds * 1000)
    return {
      state: 'stopped',
      why: `GitHub refused ${tries.length} tries of ${base} over ${forSeconds} s`,
    };
  if (now < at) return { state: 'wait', at };
  return { state: 'go', key: subKey(base, 'try', last.n + 1), attempt: last.n + 1 };
}

/** Whether rule 3 could re-run this job once its run completes: otherwise cancelling gains nothing. */
function rerunWanted(ctx: RuleContext, d: Dead, scope: ActionScope): string | null {
  const rerun = effectiveFor(ctx, scope).rules.rerunKilledJob;
  if (!rerun.enabled) return 'rule 3 (re-run killed jobs) is off';
  const cause = d.runner.loss?.cause.kind;
  if (cause && rerun.excludeCauses.includes(cause))
    return `cause ${cause} is excluded from re-runs`;
  const key = rerunBudgetKey(d.job.repository.fullName, d.job.job.runId, d.job.job.name);
  const used = ctx.facts.actions.filter(
    (a) =>
      !a.dryRun &&
      a.budgetKeys.includes(key) &&
      (a.outcome === 'claimed' || a.outcome === 'succeeded'),
  ).length;
  if (used >= rerun.budget) return `re-run budget of ${rerun.budget} already spent on ${key}`;
  return null;
}

/**
 * Rule 4, the hard-kill fast path. A runner killed without its grace period (SIGKILL, a node
 * gone, a spot reclaim) never tells GitHub: its job stays `in_progress` until the lost-runner
 * lock lapses, ~576 s after its last renewal. When the live objects show the runner dead with
 * its job (runner-death.ts) for `graceSeconds`, and no other job of the run is still in progress
 * on a live runner (unless `cancelWithLiveJobs`), the run is cancelled, then force-cancelled
 * `forceCancelAfterSeconds` later if it is still in progress. Rule 3 re-runs it once it completes.
 * A refused cancel is retried with backoff; when the fast path cannot be taken, the lock remains.
 */
export function hungJob(ctx: RuleContext): void {
  const byAttempt = new Map<string, Dead[]>();
  for (const j of ctx.facts.jobs) {
    if (j.job.status !== 'in_progress') continue;
    const v = runnerOfJob(ctx.c, j);
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
    const k = `${runKey(j.repository.fullName, j.job.runId)}#${j.job.runAttempt}`;
    byAttempt.set(k, [...(byAttempt.get(k) ?? []), first]);
  }
  for (const dead of byAttempt.values()) fastPath(ctx, dead);
}

/** One run attempt whose dead jobs the fast path may cancel, and how to say why it does not. */
interface FastPath {
  dead: Dead[];
  lead: Dead;
  scope: ActionScope;
  rules: Rules['hungJob'];
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
      rule: RULES.hungJob,
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
  const why = whyNotTaken(ctx, path);
  if (why) return hold(`fast path not taken: ${why}`);
  cancelThenForce(ctx, path);
}

/** Why cancelling this run gains nothing or costs too much, or null to go ahead. */
function whyNotTaken(ctx: RuleContext, { dead, lead, rules }: FastPath): string | null {
  const repo = lead.job.repository.fullName;
  const { runId, runAttempt } = lead.job.job;
  for (const d of dead) {
    const why = rerunWanted(ctx, d, runnerScope(d.runner, repo));
    if (why) return `${why}; GitHub's lock will fail the job`;
  }
  if (rules.cancelWithLiveJobs) return null;
  const jobIds = dead.map((d) => d.job.job.jobId);
  const live = (ctx.c.jobsByRun.get(runKey(repo, runId)) ?? []).find(
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
