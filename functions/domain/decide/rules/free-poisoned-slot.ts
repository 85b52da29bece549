import * as z from 'zod';
import { STUCK_AFTER_JOB_MS } from '../../classify/classify-finished-runner.js';
import { ms } from '../../model/time.js';
import { wake, type RuleContext } from '../context.js';
import { freeSlot } from '../free-slot.js';
import { defineRule, ruleSettings, seconds } from '../rule.js';

/**
 * Rule 1: every lost ARC runner whose EphemeralRunner still holds a slot after the grace period
 * has it deleted (uid precondition), so that ARC creates a replacement.
 */
export const freePoisonedSlot = defineRule({
  number: 1,
  name: 'freePoisonedSlot',
  id: 'rule-1-free-poisoned-slot',
  settings: ruleSettings({
    /** Wait this long after the loss so ARC ≥ 0.12 can recover on its own (backoff ≤ 155 s). */
    graceSeconds: seconds,
    /** The grace instead when ARC will not free the slot (ARC ≤ 0.11, or the runner had taken a job). */
    arcWontRecoverGraceSeconds: seconds,
    /** Force-delete (grace 0) a runner pod left on a NotReady or deleted node. */
    forceDeletePodOnDeadNode: z.boolean(),
    /** Strip ARC's finalizers from an EphemeralRunner stuck deleting this long; null = never. */
    removeStuckFinalizerAfterSeconds: seconds.nullable(),
  }),
  defaults: {
    enabled: true,
    dryRun: false,
    graceSeconds: 180,
    arcWontRecoverGraceSeconds: 0,
    forceDeletePodOnDeadNode: true,
    removeStuckFinalizerAfterSeconds: null,
  },
  /** The old name of `arcWontRecoverGraceSeconds` ("legacy ARC"), still accepted. */
  renamed: { legacyArcGraceSeconds: 'arcWontRecoverGraceSeconds' },
  decide(ctx: RuleContext): void {
    for (const v of ctx.correlation.runners) freeSlot(ctx, v, 'freePoisonedSlot', false);
    wakeWhenFinishedRunnersAreDue(ctx);
  },
});

/**
 * A runner exits within STUCK_AFTER_JOB_MS of its job ending; if its pod still lives then it is
 * stuck (actions-runner-controller#4603, actions-runner-controller#4588). Ask to be woken at that
 * moment rather than waiting for the next sweep.
 */
function wakeWhenFinishedRunnersAreDue(ctx: RuleContext): void {
  for (const v of ctx.correlation.runners) {
    if (!v.er || !v.pod || v.loss) continue;
    for (const j of v.jobs) {
      const ended = ms(j.job.status === 'completed' ? j.job.completedAt : null);
      if (ended !== null) wake(ctx, ended + STUCK_AFTER_JOB_MS, v);
    }
  }
}
