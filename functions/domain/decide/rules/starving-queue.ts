import { runnersForJob } from '../../correlate/correlate.js';
import { idempotencyKey } from '../../model/idempotency-key.js';
import { isProvenArcRunner } from '../../correlate/runner-guard.js';
import { ms } from '../../model/time.js';
import { effectiveFor, propose, runnerScope, wake, type RuleContext } from '../context.js';
import { freeSlot } from '../free-slot.js';
import { defineRule, ruleSettings, seconds } from '../rule.js';

/**
 * Rule 2: a job queued longer than `queuedSeconds` for a scale set with lost runners ⇒ free
 * their slots now (no grace); when nothing can be freed, report the starvation.
 * A queued job gets no further webhook, so this also runs from the sweep.
 */
export const starvingQueue = defineRule({
  number: 2,
  name: 'starvingQueue',
  id: 'rule-2-starving-queue',
  settings: ruleSettings({
    /** A job queued this long for a scale set with lost runners is starving. */
    queuedSeconds: seconds,
  }),
  defaults: { enabled: true, dryRun: false, queuedSeconds: 300 },
  decide(ctx: RuleContext): void {
    for (const j of ctx.facts.jobs) {
      if (j.job.status !== 'queued' || j.job.runnerName !== null) continue;
      const runners = runnersForJob(ctx.correlation, j).filter(
        (v) => v.arcOwned && isProvenArcRunner(v),
      );
      const first = runners[0];
      const queuedSince = ms(j.job.createdAt);
      if (!first || queuedSince === null) continue;
      const repo = j.repository.fullName;
      const threshold = effectiveFor(ctx, runnerScope(first, repo)).rules.starvingQueue
        .queuedSeconds;
      const due = queuedSince + threshold * 1000;
      if (ctx.now < due) {
        wake(ctx, due);
        continue;
      }
      let freed = 0;
      for (const v of runners) if (v.loss && freeSlot(ctx, v, 'starvingQueue', true)) freed++;
      if (freed > 0) continue;
      propose(ctx, {
        rule: 'starvingQueue',
        key: idempotencyKey('report-starvation', repo, j.job.jobId),
        target: {
          kind: 'report-starvation',
          scaleSet: first.scaleSet ?? j.job.labels.join(','),
          repo,
          jobId: j.job.jobId,
          queuedSince,
        },
        scope: { ...runnerScope(first, repo, j.job.htmlUrl), runnerName: null },
        cause: null,
        signal: null,
        reason: `job ${j.job.jobId} queued for ${Math.round((ctx.now - queuedSince) / 1000)} s on ${first.scaleSet ?? '?'} and no lost runner to free`,
        budgetKeys: [],
      });
    }
  },
});
