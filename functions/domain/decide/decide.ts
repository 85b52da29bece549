import type { Decision } from '../model/action.js';
import { correlate } from '../correlate/correlate.js';
import { applyGuardrails } from './guardrails.js';
import type { Facts } from '../model/facts.js';
import type { Policy } from '../policy/policy.js';
import { circuitBreaker } from './rules/circuit-breaker.js';
import { newContext } from './rules/context.js';
import { deprecatedRunner } from './rules/deprecated-runner.js';
import { freePoisonedSlot } from './rules/free-poisoned-slot.js';
import { hungJob } from './rules/hung-job.js';
import { orphanRegistration } from './rules/orphan-registration.js';
import { rerunKilledJob } from './rules/rerun-killed-job.js';
import { starvingQueue } from './rules/starving-queue.js';
import { warnedNode } from './rules/warned-node.js';

/**
 * The playbook (DESIGN.md §4, rules 1–8) over one snapshot of facts: pure, deterministic, and
 * safe to call again at any time. Time comes only from `now` (epoch ms).
 */
export function decide(facts: Facts, policy: Policy, now: number): Decision {
  const ctx = newContext(facts, policy, now, correlate(facts, now));
  starvingQueue(ctx);
  freePoisonedSlot(ctx);
  rerunKilledJob(ctx);
  hungJob(ctx);
  orphanRegistration(ctx);
  warnedNode(ctx);
  deprecatedRunner(ctx);
  const trips = circuitBreaker(ctx);
  return applyGuardrails(ctx, trips);
}
