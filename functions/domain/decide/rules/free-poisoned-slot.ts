import * as z from 'zod';
import type { RuleContext } from '../context.js';
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
  },
});
