import type { RunnerView } from '../../correlate/correlate.js';
import { MUTATING_KINDS, type Action } from '../../model/action.js';
import { idempotencyKey } from '../../model/idempotency-key.js';
import type { Policy } from '../../policy/policy.js';
import { resolvePolicy } from '../../policy/resolve-policy.js';
import * as z from 'zod';
import { effectiveFor, propose, type BreakerTrip, type RuleContext } from '../context.js';
import { defineRule, ruleSettings } from '../rule.js';

function trip(
  ctx: RuleContext,
  cluster: string,
  scaleSet: string | null,
  lost: RunnerView[],
): BreakerTrip | null {
  const scope = { cluster, namespace: null, scaleSet, repo: null, runnerName: null, jobUrl: null };
  const cb = effectiveFor(ctx, scope).rules.circuitBreaker;
  if (!cb.enabled) return null;
  const threshold = scaleSet ? cb.maxLossesPerScaleSet : cb.maxLossesPerCluster;
  const window = cb.windowSeconds * 1000;
  // The stored counter holds confirmed losses seen by earlier slices; this slice adds its own.
  const stored = ctx.facts.breakers.find((b) => b.cluster === cluster && b.scaleSet === scaleSet);
  const byRunner = new Map<string, number>(Object.entries(stored?.losses ?? {}));
  for (const v of lost) {
    if (v.lostAt === null) continue;
    const k = `${v.cluster}/${v.namespace}/${v.name}`;
    byRunner.set(k, Math.min(v.lostAt, byRunner.get(k) ?? Infinity));
  }
  const ats = [...byRunner.values()]
    .filter((t) => t > ctx.now - window && t <= ctx.now)
    .sort((a, b) => a - b);
  const tripUntil = (closesAt: number): BreakerTrip => ({
    cluster,
    scaleSet,
    losses: ats.length,
    threshold,
    windowSeconds: cb.windowSeconds,
    closesAt,
  });
  // A trip is state: once open, the breaker stays open for its window whatever the count does.
  if (stored?.openUntil != null && stored.openUntil > ctx.now) return tripUntil(stored.openUntil);
  const crossedAt = ats[threshold - 1];
  const oldest = ats[ats.length - threshold];
  if (crossedAt === undefined || oldest === undefined) return null;
  propose(ctx, {
    rule: 'circuitBreaker',
    key: idempotencyKey('trip-breaker', cluster, scaleSet ?? '*', crossedAt),
    target: {
      kind: 'trip-breaker',
      cluster,
      scaleSet,
      losses: ats.length,
      threshold,
      windowSeconds: cb.windowSeconds,
    },
    scope,
    cause: null,
    signal: { source: 'listing', detail: `${ats.length} runners lost in ${cb.windowSeconds} s` },
    reason: `${ats.length} runners lost in ${cb.windowSeconds} s on ${cluster}${scaleSet ? `/${scaleSet}` : ''} (threshold ${threshold}): stop destructive actions there`,
    budgetKeys: [],
  });
  return tripUntil(oldest + window);
}

/**
 * Rule 7: too many runners lost in a window, per scale set or per cluster ⇒ an alert, and no
 * destructive action there (the guardrails hold them) until the count drops.
 */
export const circuitBreaker = defineRule({
  number: 7,
  name: 'circuitBreaker',
  id: 'rule-7-circuit-breaker',
  settings: ruleSettings({
    windowSeconds: z.number().int().min(1),
    maxLossesPerScaleSet: z.number().int().min(1),
    maxLossesPerCluster: z.number().int().min(1),
  }),
  defaults: {
    enabled: true,
    dryRun: false,
    windowSeconds: 900,
    maxLossesPerScaleSet: 10,
    maxLossesPerCluster: 30,
  },
  decide(ctx: RuleContext): void {
    for (const [scope, views] of lossesByScope(ctx)) {
      const t = trip(ctx, scope.cluster, scope.scaleSet, views);
      if (t) ctx.trips.push(t);
    }
  },
});

/**
 * The confirmed losses of each scope a breaker guards, clusters first, then scale sets: every
 * scope with a loss in this slice, and every scope the store already has a breaker for.
 */
function lossesByScope(
  ctx: RuleContext,
): [{ cluster: string; scaleSet: string | null }, RunnerView[]][] {
  // Only confirmed losses count: the runner's pod or EphemeralRunner was read and shows it.
  const lost = ctx.correlation.runners.filter((v) => v.arcOwned && v.loss && (v.pod || v.er));
  const byCluster = new Map<string, RunnerView[]>();
  const bySet = new Map<string, { cluster: string; scaleSet: string; views: RunnerView[] }>();
  // Scopes known from the store (losses counted by other slices, an open trip) count too.
  for (const b of ctx.facts.breakers) {
    if (b.scaleSet === null) byCluster.set(b.cluster, byCluster.get(b.cluster) ?? []);
    else
      bySet.set(`${b.cluster}/${b.scaleSet}`, {
        cluster: b.cluster,
        scaleSet: b.scaleSet,
        views: [],
      });
  }
  for (const v of lost) {
    byCluster.set(v.cluster, [...(byCluster.get(v.cluster) ?? []), v]);
    if (!v.scaleSet) continue;
    const k = `${v.cluster}/${v.scaleSet}`;
    const g = bySet.get(k) ?? { cluster: v.cluster, scaleSet: v.scaleSet, views: [] };
    g.views.push(v);
    bySet.set(k, g);
  }
  return [
    ...[...byCluster].map(
      ([cluster, views]): [{ cluster: string; scaleSet: null }, RunnerView[]] => [
        { cluster, scaleSet: null },
        views,
      ],
    ),
    ...[...bySet.values()].map((g): [{ cluster: string; scaleSet: string }, RunnerView[]] => [
      g,
      g.views,
    ]),
  ];
}

/**
 * One breaker a destructive call must pass as it is claimed: while it is open, or while `limit`
 * losses (the call's own included) are counted in its window, the call is held.
 */
export interface BreakerGate {
  cluster: string;
  /** null: the whole cluster. */
  scaleSet: string | null;
  limit: number;
  windowMs: number;
}

/**
 * The breakers a destructive action passes when it is claimed (its scale set's, then its
 * cluster's), and the runner whose loss it acts on, keyed as the breaker counts losses (null for
 * an action on no runner). A dry run makes no call and passes none.
 */
export function breakerGates(
  policy: Policy,
  action: Pick<Action, 'target' | 'scope' | 'dryRun'>,
): { gates: BreakerGate[]; runner: string | null } {
  const { cluster, namespace, scaleSet, runnerName } = action.scope;
  const runner = cluster && runnerName ? `${cluster}/${namespace}/${runnerName}` : null;
  if (!cluster || action.dryRun || !MUTATING_KINDS.has(action.target.kind))
    return { gates: [], runner };
  const gates: BreakerGate[] = [];
  for (const set of scaleSet ? [scaleSet, null] : [null]) {
    const cb = resolvePolicy(policy, { cluster, namespace: null, scaleSet: set, repo: null }).rules
      .circuitBreaker;
    if (!cb.enabled) continue;
    const limit = set ? cb.maxLossesPerScaleSet : cb.maxLossesPerCluster;
    gates.push({ cluster, scaleSet: set, limit, windowMs: cb.windowSeconds * 1000 });
  }
  return { gates, runner };
}
