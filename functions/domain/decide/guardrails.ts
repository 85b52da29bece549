import {
  MUTATING_KINDS,
  type Action,
  type Decision,
  type HeldAction,
  type RunnerAt,
} from '../model/action.js';
import type { RunnerView } from '../correlate/correlate.js';
import { ruleMode } from '../policy/resolve-policy.js';
import {
  effectiveFor,
  nodeDown,
  type BreakerTrip,
  type Proposal,
  type RuleContext,
} from './context.js';
import { budgetSpent } from './rule.js';
import { ruleNamed } from './rules/index.js';

function findView(
  ctx: RuleContext,
  cluster: string,
  namespace: string,
  name: string,
): RunnerView | undefined {
  return (ctx.correlation.byName.get(name) ?? []).find(
    (v) => v.cluster === cluster && v.namespace === namespace,
  );
}

/** For actions on Kubernetes objects: the target is an ARC runner and the uid still matches. */
function targetCheck(ctx: RuleContext, p: Proposal): string | null {
  const t = p.target;
  if (
    t.kind !== 'delete-ephemeral-runner' &&
    t.kind !== 'delete-pod' &&
    t.kind !== 'remove-finalizer' &&
    t.kind !== 'mark-at-risk'
  )
    return null;
  const v = findView(
    ctx,
    t.cluster,
    t.namespace,
    t.kind === 'mark-at-risk' ? t.runnerName : t.name,
  );
  const remembered =
    t.kind === 'mark-at-risk' &&
    ctx.correlation.remembered.some(
      (r) =>
        r.runner.cluster === t.cluster &&
        r.runner.namespace === t.namespace &&
        r.runner.name === t.runnerName,
    );
  if (remembered && !v?.arcOwned) return null;
  if (!v?.arcOwned) return 'not an ARC runner (labels/owner references)';
  if (t.kind === 'delete-pod') {
    if (v.pod?.metadata.uid !== t.uid) return 'pod uid changed';
    if (t.force && !nodeDown(v)) return 'force delete only for a pod on a NotReady or deleted node';
  }
  if (
    (t.kind === 'delete-ephemeral-runner' || t.kind === 'remove-finalizer') &&
    v.er?.metadata.uid !== t.uid
  )
    return 'EphemeralRunner uid changed';
  return null;
}

function breakerFor(trips: BreakerTrip[], p: Proposal): BreakerTrip | undefined {
  const { cluster, scaleSet } = p.scope;
  return trips.find(
    (t) => t.cluster === cluster && (t.scaleSet === null || t.scaleSet === scaleSet),
  );
}

/**
 * The guardrails every proposal passes, in order: one action per key, nothing already claimed or done,
 * scope known and allowed, rule on, target an ARC runner with the same uid, circuit breaker
 * closed for destructive actions, re-run budgets held. Dry-run marks what survives.
 */
export function applyGuardrails(ctx: RuleContext): Decision {
  const actions: Action[] = [];
  const held: HeldAction[] = [...ctx.holds];
  const seen = new Set<string>();
  const charged = new Map<string, number>();
  const recorded = new Map(ctx.facts.actions.map((a) => [a.key, a]));
  const wakes = [...ctx.wakes];

  for (const p of ctx.proposals) {
    if (seen.has(p.key)) continue;
    seen.add(p.key);
    const hold = (why: string) =>
      held.push({
        key: p.key,
        rule: ruleNamed(p.rule).id,
        kind: p.target.kind,
        scope: p.scope,
        why,
      });
    // Claimed or done: idempotency, not a hold. A `failed` or `retry-later` record (the engine
    // turns a stale claim it re-checked into `failed`) may be claimed again under the same key.
    const prior = recorded.get(p.key);
    if (prior && prior.outcome !== 'failed' && prior.outcome !== 'retry-later') continue;
    if (!p.scope.cluster) {
      hold('no cluster known for this action');
      continue;
    }
    const eff = effectiveFor(ctx, p.scope);
    const mode = ruleMode(eff, p.rule);
    if (!eff.allowed) {
      hold(eff.denial ?? 'not allowed');
      continue;
    }
    if (!mode.on) {
      hold(`rule ${ruleNamed(p.rule).id} is off`);
      continue;
    }
    const bad = targetCheck(ctx, p);
    if (bad) {
      hold(bad);
      continue;
    }
    const mutating = MUTATING_KINDS.has(p.target.kind);
    const open = mutating ? breakerFor(ctx.trips, p) : undefined;
    if (open) {
      hold(
        `circuit breaker open: ${open.losses} losses in ${open.windowSeconds} s on ${open.cluster}${open.scaleSet ? `/${open.scaleSet}` : ''}`,
      );
      wakes.push({ at: open.closesAt, runner: null });
      continue;
    }
    const budget = ruleNamed(p.rule).budget(eff.rules[p.rule]);
    if (budget !== null) {
      const spent = p.budgetKeys.find(
        (k) => budgetSpent(ctx.facts.actions, k) + (charged.get(k) ?? 0) >= budget,
      );
      if (spent !== undefined) {
        hold(`re-run budget of ${budget} exhausted for ${spent}`);
        continue;
      }
      for (const k of new Set(p.budgetKeys)) charged.set(k, (charged.get(k) ?? 0) + 1);
    }
    actions.push({
      key: p.key,
      rule: ruleNamed(p.rule).id,
      target: p.target,
      scope: p.scope,
      cause: p.cause,
      signal: p.signal,
      reason: p.reason,
      dryRun: mode.dryRun,
      budgetKeys: p.budgetKeys,
      ...(p.recoveredBy ? { recoveredBy: p.recoveredBy } : {}),
    });
  }
  return { actions, held, needs: ctx.needs, ...whenAgain(wakes, ctx.now) };
}

/** The earliest future timer, and the runners they are for when each is one runner's. */
function whenAgain(
  wakes: RuleContext['wakes'],
  now: number,
): Pick<Decision, 'wakeAt' | 'wakeRunners'> {
  const future = wakes.filter((w) => w.at > now);
  if (future.length === 0) return { wakeAt: null, wakeRunners: null };
  const runners = future.map((w) => w.runner);
  const wakeAt = Math.min(...future.map((w) => w.at));
  if (runners.some((r) => r === null)) return { wakeAt, wakeRunners: null };
  const byName = new Map(
    (runners as RunnerAt[]).map((r) => [`${r.cluster}/${r.namespace}/${r.name}`, r]),
  );
  return { wakeAt, wakeRunners: [...byName.values()] };
}
