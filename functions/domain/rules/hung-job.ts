import { runnerOfJob } from '../correlate.js';
import { idempotencyKey } from '../idempotency-key.js';
import { describeCause } from '../loss.js';
import { isProvenArcRunner } from '../runner-guard.js';
import { graceStart } from './grace.js';
import { effectiveFor, propose, runnerScope, wake, type RuleContext } from './context.js';

/**
 * Rule 4 (off by default): a job still in progress whose runner is gone past `graceSeconds` ⇒
 * cancel the run; force-cancel if it is still in progress `forceCancelAfterSeconds` later.
 * Rule 3 then re-runs it once the run completes.
 */
export function hungJob(ctx: RuleContext): void {
  for (const j of ctx.facts.jobs) {
    if (j.job.status !== 'in_progress') continue;
    const v = runnerOfJob(ctx.c, j);
    if (!v?.arcOwned || !isProvenArcRunner(v) || !v.loss) continue;
    const repo = j.repository.fullName;
    const scope = runnerScope(v, repo, j.job.htmlUrl);
    const rules = effectiveFor(ctx, scope).rules.hungJob;
    if (!rules.enabled) continue;
    const since = graceStart(v);
    if (since === null) continue;
    const due = since + rules.graceSeconds * 1000;
    if (ctx.now < due) {
      wake(ctx, due);
      continue;
    }
    const { runId, runAttempt, jobId } = j.job;
    const runRef = { repo, installationId: j.installationId, runId, runAttempt, jobIds: [jobId] };
    const cancelKey = idempotencyKey('cancel-run', repo, runId, runAttempt);
    // An `unknown` cancel may have taken effect: it is not sent again; the force-cancel that
    // follows reads the run first and sends nothing once it completed or moved on.
    const cancelled = ctx.facts.actions.find(
      (a) =>
        a.key === cancelKey &&
        (a.outcome === 'succeeded' || a.outcome === 'claimed' || a.outcome === 'unknown'),
    );
    const base = {
      rule: 'hungJob' as const,
      scope,
      cause: v.loss.cause,
      signal: v.loss.signal,
      budgetKeys: [],
    };
    if (!cancelled) {
      propose(ctx, {
        ...base,
        key: cancelKey,
        target: { kind: 'cancel-run', ...runRef },
        reason: `job ${jobId} still in progress ${Math.round((ctx.now - since) / 1000)} s after its runner ${v.name} was lost (${describeCause(v.loss.cause)}): cancel run ${runId}`,
      });
      continue;
    }
    const forceDue =
      (cancelled.finishedAt ?? cancelled.claimedAt) + rules.forceCancelAfterSeconds * 1000;
    if (ctx.now < forceDue) {
      wake(ctx, forceDue);
      continue;
    }
    propose(ctx, {
      ...base,
      key: idempotencyKey('force-cancel-run', repo, runId, runAttempt),
      target: { kind: 'force-cancel-run', ...runRef },
      reason: `run ${runId} still in progress ${rules.forceCancelAfterSeconds} s after cancel: force-cancel`,
    });
  }
}
