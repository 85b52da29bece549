import * as z from 'zod';
import { RULE_LIST, type AnyRule, type RuleName, type Rules } from '../decide/rules/index.js';

/** What a policy document may say of the rules: any rule, any of its settings. */
export type RulesPatch = { [N in RuleName]?: Partial<Rules[N]> };

/**
 * A rule's settings as a document may write them: every key optional, unknown keys refused, and
 * a key under its old name read as the new one (the new name wins when both are given).
 */
function documentSchema(rule: AnyRule) {
  const partial = rule.settings.partial();
  const renamed = Object.entries(rule.renamed);
  if (renamed.length === 0) return partial;
  const oldKeys = Object.fromEntries(
    renamed.map(([old, key]) => [old, z.optional(rule.settings.shape[key] ?? z.never())]),
  );
  return partial.extend(oldKeys).transform((doc) => {
    const out: Record<string, unknown> = { ...doc };
    for (const [old, key] of renamed) {
      out[key] ??= out[old];
      delete out[old];
    }
    return out;
  });
}

/** The policy document's `rules`: every rule of the list, each optional, unknown ones refused. */
const rulesSchema = z
  .object(Object.fromEntries(RULE_LIST.map((r) => [r.name, documentSchema(r).optional()])))
  .strict() as unknown as z.ZodType<RulesPatch>;

/** The policy document's shape: every key optional (defaults fill in), unknown keys rejected. */
const sw = { enabled: z.boolean().optional(), dryRun: z.boolean().optional() };
const patterns = z.array(z.string().min(1)).optional();
const overrideShape = {
  ...sw,
  rules: rulesSchema.optional(),
  allow: z.object({ namespaces: patterns, repositories: patterns }).strict().optional(),
};
const overrideSchema = z.object(overrideShape).strict();

export const policySchema = z
  .object({
    dryRun: z.boolean().optional(),
    checkRuns: z.boolean().optional(),
    allow: z
      .object({ clusters: patterns, namespaces: patterns, repositories: patterns })
      .strict()
      .optional(),
    rules: rulesSchema.optional(),
    clusters: z
      .record(
        z.string(),
        z
          .object({ ...overrideShape, scaleSets: z.record(z.string(), overrideSchema).optional() })
          .strict(),
      )
      .optional(),
    scaleSets: z.record(z.string(), overrideSchema).optional(),
  })
  .strict();
