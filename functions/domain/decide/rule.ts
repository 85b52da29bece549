import * as z from 'zod';
import type { ActionRecord } from '../model/facts.js';
import type { RuleContext } from './context.js';

/**
 * A rule of the playbook (DESIGN.md §4), as one unit: who it is, what the policy may set for it
 * and to what by default, what budget its actions charge, and what it decides. A rule file
 * exports one, and `rules/index.ts` lists them all once.
 */
export interface Rule<Name extends string, Settings extends RuleSwitch> {
  /** Its number in the playbook. */
  number: number;
  /** Its key in the policy document: `rules.<name>`. */
  name: Name;
  /** What actions, holds and the audit call it: `rule-<number>-<name in kebab case>`. */
  id: `rule-${number}-${string}`;
  /** Its settings, every key required here (a policy document may leave any out). */
  settings: z.ZodObject<z.ZodRawShape>;
  defaults: Settings;
  /** Keys a policy document may still use under an old name: old name → the key it became. */
  renamed: Readonly<Record<string, string>>;
  /**
   * The most times one budget key (`budgetKeys` of its actions) may be charged, from its effective
   * settings; null when its actions charge none. The guardrails hold an action past it.
   */
  budget(settings: Settings): number | null;
  /** Proposes actions, needs, wake-ups and holds into the context. */
  decide(ctx: RuleContext): void;
}

/** The settings every rule has: switched on or off, and its own dry run. */
export interface RuleSwitch {
  enabled: boolean;
  /** Rule-level dry run: the rule's actions are marked dryRun. */
  dryRun: boolean;
}

/** A rule's settings schema: its own keys, with the switches every rule has. */
export const ruleSettings = <Shape extends z.ZodRawShape>(shape: Shape) =>
  z.object({ enabled: z.boolean(), dryRun: z.boolean(), ...shape }).strict();

/** Whole seconds, zero or more. */
export const seconds = z.number().int().nonnegative();

/**
 * One rule, its settings type inferred from its schema and its name kept literal, so that the
 * policy's `Rules` type can be built from the list.
 */
export function defineRule<Name extends string, Shape extends z.ZodRawShape>(rule: {
  number: number;
  name: Name;
  id: `rule-${number}-${string}`;
  settings: z.ZodObject<Shape>;
  defaults: z.infer<z.ZodObject<Shape>> & RuleSwitch;
  renamed?: Readonly<Record<string, keyof z.infer<z.ZodObject<Shape>> & string>>;
  budget?: (settings: z.infer<z.ZodObject<Shape>> & RuleSwitch) => number;
  decide(ctx: RuleContext): void;
}): Rule<Name, z.infer<z.ZodObject<Shape>> & RuleSwitch> {
  const { budget } = rule;
  return { ...rule, renamed: rule.renamed ?? {}, budget: (s) => (budget ? budget(s) : null) };
}

/**
 * How many times a budget key is already spent: claimed or succeeded actions, dry runs aside.
 * Counted by action key: the sweep's slice reads an action through both its runner and its run.
 */
export function budgetSpent(actions: readonly ActionRecord[], key: string): number {
  const spent = actions.filter(
    (a) =>
      !a.dryRun &&
      a.budgetKeys.includes(key) &&
      (a.outcome === 'claimed' || a.outcome === 'succeeded'),
  );
  return new Set(spent.map((a) => a.key)).size;
}
