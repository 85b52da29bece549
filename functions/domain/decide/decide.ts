import type { Decision } from '../model/action.js';
import { correlate } from '../correlate/correlate.js';
import type { Facts } from '../model/facts.js';
import type { Policy } from '../policy/policy.js';
import { newContext } from './context.js';
import { applyGuardrails } from './guardrails.js';
import { RULE_LIST } from './rules/index.js';

/**
 * The playbook (DESIGN.md §4) over one snapshot of facts: pure, deterministic, and safe to call
 * again at any time. Time comes only from `now` (epoch ms). The rules run in their listed order
 * (rules/index.ts says why it matters), then the guardrails decide what is emitted.
 */
export function decide(facts: Facts, policy: Policy, now: number): Decision {
  const ctx = newContext(facts, policy, now, correlate(facts, now));
  for (const rule of RULE_LIST) rule.decide(ctx);
  return applyGuardrails(ctx);
}
