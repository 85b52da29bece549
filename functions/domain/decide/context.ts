import type {
  ActionScope,
  ActionTarget,
  HeldAction,
  Need,
  RecoveryPath,
  RunnerAt,
} from '../model/action.js';
import type { Correlation, RunnerView } from '../correlate/correlate.js';
import type { Facts } from '../model/facts.js';
import type { LossCause, Signal } from '../model/loss.js';
import type { Policy } from '../policy/policy.js';
import type { RuleName } from './rules/index.js';
import { resolvePolicy, type EffectivePolicy } from '../policy/resolve-policy.js';

/** An action a rule wants; guardrails decide whether it is emitted, held, or dry-run. */
export interface Proposal {
  rule: RuleName;
  key: string;
  target: ActionTarget;
  scope: ActionScope;
  cause: LossCause | null;
  signal: Signal | null;
  reason: string;
  budgetKeys: string[];
  recoveredBy?: RecoveryPath;
}

export interface RuleContext {
  facts: Facts;
  policy: Policy;
  now: number;
  /** The facts joined: runner views, jobs by run, and the indexes the joins use. */
  correlation: Correlation;
  proposals: Proposal[];
  needs: Need[];
  /** When to decide again, and for which runner alone (null: for the whole slice). */
  wakes: { at: number; runner: RunnerAt | null }[];
  /** What a rule chose not to do for now, and why (logged and reported with the guardrails' holds). */
  holds: HeldAction[];
  /** Circuit breakers open in this slice (rule 7): the guardrails hold destructive actions there. */
  trips: BreakerTrip[];
}

/** An open circuit breaker of a cluster or a scale set. */
export interface BreakerTrip {
  cluster: string;
  /** null: the whole cluster. */
  scaleSet: string | null;
  losses: number;
  threshold: number;
  windowSeconds: number;
  /** When the count drops below the threshold again, unless more losses come. */
  closesAt: number;
}

export function newContext(
  facts: Facts,
  policy: Policy,
  now: number,
  correlation: Correlation,
): RuleContext {
  return {
    facts,
    policy,
    now,
    correlation,
    proposals: [],
    needs: [],
    wakes: [],
    holds: [],
    trips: [],
  };
}

export const propose = (ctx: RuleContext, p: Proposal): void => {
  ctx.proposals.push(p);
};

/** Decide again at `at`: for `runner` alone when the timer is that runner's own. */
export const wake = (ctx: RuleContext, at: number, runner?: RunnerAt): void => {
  if (at <= ctx.now) return;
  ctx.wakes.push({
    at,
    runner: runner
      ? { cluster: runner.cluster, namespace: runner.namespace, name: runner.name }
      : null,
  });
};

export const need = (ctx: RuleContext, n: Need): void => {
  if (!ctx.needs.some((x) => JSON.stringify(x) === JSON.stringify(n))) ctx.needs.push(n);
};

export function runnerScope(
  v: Pick<RunnerView, 'cluster' | 'namespace' | 'scaleSet' | 'name'>,
  repo: string | null = null,
  jobUrl: string | null = null,
): ActionScope {
  return {
    cluster: v.cluster,
    namespace: v.namespace,
    scaleSet: v.scaleSet,
    repo,
    runnerName: v.name,
    jobUrl,
  };
}

const resolved = new WeakMap<Policy, Map<string, EffectivePolicy>>();

/** The effective policy of a scope (memoised per policy object: decide resolves it often). */
export function effectiveFor(ctx: RuleContext, scope: ActionScope): EffectivePolicy {
  const key = JSON.stringify([scope.cluster, scope.namespace, scope.scaleSet, scope.repo]);
  let cache = resolved.get(ctx.policy);
  if (!cache) {
    cache = new Map();
    resolved.set(ctx.policy, cache);
  }
  let eff = cache.get(key);
  if (!eff) {
    eff = resolvePolicy(ctx.policy, {
      cluster: scope.cluster ?? '',
      namespace: scope.namespace,
      scaleSet: scope.scaleSet,
      repo: scope.repo,
    });
    cache.set(key, eff);
  }
  return eff;
}

/** Whether the runner's node is NotReady or gone. */
export const nodeDown = (v: RunnerView): boolean =>
  v.node?.deletionTimestamp != null ||
  v.nodeSignals.some((s) => s.kind === 'node-not-ready' || s.kind === 'node-gone');
