import { mergeDeep } from './merge-deep.js';
import type { Override, Policy } from './policy.js';
import type { RuleName, Rules } from '../decide/rules/index.js';

export interface PolicyScope {
  cluster: string;
  namespace?: string | null;
  scaleSet?: string | null;
  /** `owner/repo`; null for cluster-only actions. */
  repo?: string | null;
}

export interface EffectivePolicy {
  /** False when the scope is outside an allowlist or switched off; `denial` says why. */
  allowed: boolean;
  denial: string | null;
  dryRun: boolean;
  rules: Rules;
}

/** `*` matches any run of characters; everything else is literal. */
export function globMatch(pattern: string, value: string): boolean {
  const re = pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${re.join('.*')}$`).test(value);
}

const anyMatch = (patterns: string[], value: string) => patterns.some((p) => globMatch(p, value));

function namespaceAllowed(patterns: string[], cluster: string, namespace: string): boolean {
  return patterns.some((p) =>
    p.includes('/') ? globMatch(p, `${cluster}/${namespace}`) : globMatch(p, namespace),
  );
}

/**
 * The effective policy for (cluster, namespace, scale set, repo). Overrides apply from general to
 * specific: global → cluster → scale set (any cluster) → scale set in this cluster. A global
 * `dryRun: true` cannot be switched off by an override.
 */
export function resolvePolicy(policy: Policy, scope: PolicyScope): EffectivePolicy {
  const cluster = policy.clusters[scope.cluster];
  const layers: Override[] = [cluster ?? {}];
  if (scope.scaleSet) {
    layers.push(policy.scaleSets[scope.scaleSet] ?? {});
    layers.push(cluster?.scaleSets?.[scope.scaleSet] ?? {});
  }
  let rules = policy.rules;
  let dryRun = policy.dryRun;
  let enabled = true;
  for (const l of layers) {
    rules = mergeDeep(rules, l.rules);
    if (l.dryRun !== undefined) dryRun = policy.dryRun || l.dryRun;
    if (l.enabled !== undefined) enabled = l.enabled;
  }
  const { allow } = policy;
  const lists = (pick: (l: Override) => string[] | undefined) =>
    layers.map(pick).filter((x): x is string[] => x !== undefined);
  const namespaces = [allow.namespaces, ...lists((l) => l.allow?.namespaces)];
  const repos = [allow.repositories, ...lists((l) => l.allow?.repositories)];
  const denial = !anyMatch(allow.clusters, scope.cluster)
    ? `cluster ${scope.cluster} is not in allow.clusters`
    : scope.namespace &&
        !namespaces.every((p) => namespaceAllowed(p, scope.cluster, scope.namespace ?? ''))
      ? `namespace ${scope.cluster}/${scope.namespace} is not in allow.namespaces`
      : scope.repo && !repos.every((p) => anyMatch(p, scope.repo ?? ''))
        ? `repository ${scope.repo} is not in allow.repositories`
        : !enabled
          ? `runner-medic is switched off for ${scope.cluster}${scope.scaleSet ? `/${scope.scaleSet}` : ''}`
          : null;
  return { allowed: denial === null, denial, dryRun, rules };
}

/** Whether a rule runs in this scope, and in dry-run mode. */
export function ruleMode(
  effective: EffectivePolicy,
  rule: RuleName,
): { on: boolean; dryRun: boolean } {
  const r = effective.rules[rule];
  return { on: effective.allowed && r.enabled, dryRun: effective.dryRun || r.dryRun };
}
