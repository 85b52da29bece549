import { parseDocument } from 'yaml';
import { RULE_LIST, type Rules } from '../decide/rules/index.js';
import { mergeDeep } from './merge-deep.js';
import { policySchema, type RulesPatch } from './policy-schema.js';
import { problemLines } from '../model/zod-problems.js';

/** Kept here too: the test harnesses overlay policy patches with it. */
export { mergeDeep } from './merge-deep.js';

/**
 * Policy: one YAML/JSON document, validated; every key optional, safe defaults filled in. Each
 * rule's settings, their schema and defaults come from the rule list (decide/rules/index.ts).
 */

export interface Override {
  enabled?: boolean;
  dryRun?: boolean;
  rules?: RulesPatch;
  /** Narrows the global allowlists for this cluster or scale set (both must allow). */
  allow?: { namespaces?: string[]; repositories?: string[] };
}

export interface Policy {
  /** Global dry run: no mutating call anywhere, whatever an override says. */
  dryRun: boolean;
  /** A `runner-medic` check run explains each re-run or cancel on the run's commit. */
  checkRuns: boolean;
  allow: {
    /** Cluster names (as in events' `clusterName`); `*` globs. */
    clusters: string[];
    /** `namespace` or `cluster/namespace`; `*` globs. */
    namespaces: string[];
    /** `owner/repo`, `owner/*` or `*`. */
    repositories: string[];
  };
  rules: Rules;
  clusters: Record<string, Override & { scaleSets?: Record<string, Override> }>;
  /** Per scale set, in every cluster. */
  scaleSets: Record<string, Override>;
}

/** Every rule's defaults, from the rule list. */
const DEFAULT_RULES = Object.fromEntries(RULE_LIST.map((r) => [r.name, r.defaults])) as Rules;

export const DEFAULT_POLICY: Policy = {
  dryRun: false,
  checkRuns: true,
  allow: { clusters: ['*'], namespaces: ['*'], repositories: ['*'] },
  rules: DEFAULT_RULES,
  clusters: {},
  scaleSets: {},
};

export type PolicyResult =
  { ok: true; value: Policy } | { ok: false; reason: string; errors: string[] };

/** Validate an already-parsed document. Every error names its key path. */
export function policyFromObject(doc: unknown): PolicyResult {
  const r = policySchema.safeParse(doc ?? {});
  if (!r.success) {
    const errors = problemLines(r.error);
    return { ok: false, reason: `invalid policy: ${errors.join('; ')}`, errors };
  }
  const d = r.data;
  return {
    ok: true,
    value: {
      dryRun: d.dryRun ?? false,
      checkRuns: d.checkRuns ?? DEFAULT_POLICY.checkRuns,
      allow: mergeDeep(DEFAULT_POLICY.allow, d.allow),
      rules: mergeDeep(DEFAULT_RULES, d.rules),
      clusters: d.clusters ?? {},
      scaleSets: d.scaleSets ?? {},
    },
  };
}

/** Parse a YAML or JSON policy document (empty text = all defaults). */
export function parsePolicy(text: string): PolicyResult {
  const doc = parseDocument(text, { prettyErrors: false });
  if (doc.errors.length > 0) {
    const errors = doc.errors.map((e) => `(document): ${e.message}`);
    return { ok: false, reason: `invalid policy: ${errors.join('; ')}`, errors };
  }
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (e) {
    // e.g. an alias to an anchor that is not set: only found when the document is resolved.
    const message = e instanceof Error ? e.message : String(e);
    return {
      ok: false,
      reason: `invalid policy: (document): ${message}`,
      errors: [`(document): ${message}`],
    };
  }
  return policyFromObject(value);
}
