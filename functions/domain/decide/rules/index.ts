import type { Rule } from '../rule.js';
import { circuitBreaker } from './circuit-breaker.js';
import { deprecatedRunner } from './deprecated-runner.js';
import { freePoisonedSlot } from './free-poisoned-slot.js';
import { hungJob } from './hung-job.js';
import { orphanRegistration } from './orphan-registration.js';
import { rerunKilledJob } from './rerun-killed-job.js';
import { starvingQueue } from './starving-queue.js';
import { warnedNode } from './warned-node.js';

/**
 * Every rule, listed once, in the order decide() runs them. The policy's settings, schema and
 * defaults, the guardrails' budgets, the README's policy table and the tests all read this list:
 * a new rule is its file and one line here.
 *
 * The order matters:
 * - The guardrails keep the first proposal of a key. Rule 2 runs before rule 1 because both may
 *   propose deleting the same EphemeralRunner: for a starving queue the delete is rule 2's, made
 *   at once under rule 2's switch and dry run, with its reason, rather than rule 1's after its
 *   grace.
 * - A decision lists its actions, holds and needs in this order, and the engine carries actions
 *   out in it: rule 3's re-runs come before rule 4's cancels, and rule 7's breaker alert comes
 *   last, after every proposal it may stop.
 * - Rule 7 runs last: it only counts the slice's confirmed losses, and its trips are read by the
 *   guardrails, which then hold the destructive actions of every rule in a tripped scope.
 */
export const RULE_LIST = [
  starvingQueue,
  freePoisonedSlot,
  rerunKilledJob,
  hungJob,
  orphanRegistration,
  warnedNode,
  deprecatedRunner,
  circuitBreaker,
] as const;

type ListedRule = (typeof RULE_LIST)[number];

/** A rule's key in the policy document (`rules.<name>`). */
export type RuleName = ListedRule['name'];

/** Every rule's effective settings, by name: the policy's `rules`. */
export type Rules = { [R in ListedRule as R['name']]: R['defaults'] };

/** Any listed rule, its settings widened to any rule's (a rule's budget reads only its own). */
export type AnyRule = Rule<RuleName, Rules[RuleName]>;

const BY_NAME = new Map<RuleName, AnyRule>(RULE_LIST.map((r) => [r.name, r]));

/** The listed rule of this name. */
export function ruleNamed(name: RuleName): AnyRule {
  const rule = BY_NAME.get(name);
  if (!rule) throw new Error(`no rule named ${name}`);
  return rule;
}
