import * as z from 'zod';
import { defineRule, ruleSettings } from '../rule.js';
import { idempotencyKey } from '../../model/idempotency-key.js';
import type { ActionOutcome } from '../../model/action.js';
import { NODE_DOWN_KINDS, type NodeWarningKind } from '../../model/loss.js';
import type { RememberedRunner } from '../../correlate/runners-on-nodes.js';
import { isProvenArcRunner } from '../../correlate/runner-guard.js';
import { effectiveFor, need, propose, runnerScope, type RuleContext } from '../context.js';

/** A delete of its EphemeralRunner that is done, under way, or (in dry run) decided. */
const BEING_FREED: ReadonlySet<ActionOutcome> = new Set([
  'claimed',
  'succeeded',
  'retry-later',
  'dry-run',
]);

const WARNINGS: ReadonlySet<NodeWarningKind> = new Set([
  'spot-interruption-warning',
  'karpenter-disruption',
  'nth-drain',
  'instance-terminating',
]);

/**
 * Rule 6: a node is about to go (spot warning, Karpenter `DisruptionTerminating`, a drain). Idle
 * runners on it are replaced early; busy ones are marked at risk so rule 3 acts on completion.
 */
export const warnedNode = defineRule({
  number: 6,
  name: 'warnedNode',
  id: 'rule-6-warned-node',
  settings: ruleSettings({
    /** Replace an idle runner on a node about to go rather than let it take a job there. */
    replaceIdle: z.boolean(),
  }),
  defaults: { enabled: true, dryRun: false, replaceIdle: true },
  decide(ctx: RuleContext): void {
    for (const r of ctx.correlation.remembered) warnedRememberedRunner(ctx, r);
    for (const v of ctx.correlation.runners) {
      if (!v.arcOwned || !isProvenArcRunner(v) || v.loss) continue;
      const w = [...v.warnings, ...v.nodeSignals].find((s) => WARNINGS.has(s.kind));
      if (!w) continue;
      const scope = runnerScope(v);
      const rules = effectiveFor(ctx, scope).rules.warnedNode;
      if (!rules.enabled) continue;
      const base = {
        rule: 'warnedNode' as const,
        scope,
        cause: null,
        signal: w.signal,
        budgetKeys: [],
      };
      const uid = v.pod?.metadata.uid ?? v.er?.metadata.uid ?? '';
      if (v.busy) {
        propose(ctx, {
          ...base,
          key: idempotencyKey('mark-at-risk', v.cluster, v.namespace, v.name, uid),
          target: {
            kind: 'mark-at-risk',
            cluster: v.cluster,
            namespace: v.namespace,
            runnerName: v.name,
            warning: w.kind,
          },
          reason: `${v.name} is running a job on a node about to go (${w.kind}): mark at risk`,
        });
      } else if (rules.replaceIdle && v.er && v.er.metadata.deletionTimestamp === null) {
        const er = v.er.metadata;
        propose(ctx, {
          ...base,
          key: idempotencyKey('delete-ephemeral-runner', v.cluster, v.namespace, v.name, er.uid),
          target: {
            kind: 'delete-ephemeral-runner',
            cluster: v.cluster,
            namespace: v.namespace,
            name: v.name,
            uid: er.uid,
          },
          reason: `${v.name} is idle on a node about to go (${w.kind}): replace it early`,
        });
      }
    }
  },
});

/**
 * A runner known from the store only (a node signal reads no runner object): a busy runner on a
 * warned node is marked at risk from what the sweep proved (a store write, nothing destructive).
 * Anything more — replacing an idle runner, a node that is already down — first reads the
 * runner's live pod and EphemeralRunner, and the rules decide again on those.
 */
function warnedRememberedRunner(ctx: RuleContext, remembered: RememberedRunner): void {
  const { runner: r, nodeSignals, jobsInProgress } = remembered;
  // Already being replaced (its EphemeralRunner deleted, or would be in dry run): its job is
  // over, whatever memory says, and its loss is rule 3's.
  const freed = idempotencyKey(
    'delete-ephemeral-runner',
    r.cluster,
    r.namespace,
    r.name,
    r.ephemeralRunnerUid,
  );
  if (ctx.facts.actions.some((a) => a.key === freed && BEING_FREED.has(a.outcome))) return;
  const liveObjects = {
    kind: 'runner-objects' as const,
    cluster: r.cluster,
    namespace: r.namespace,
    name: r.name,
  };
  if (nodeSignals.some((s) => NODE_DOWN_KINDS.includes(s.kind))) {
    need(ctx, liveObjects);
    return;
  }
  const w = nodeSignals.find((s) => WARNINGS.has(s.kind));
  if (!w) return;
  const scope = runnerScope(r);
  const rules = effectiveFor(ctx, scope).rules.warnedNode;
  if (!rules.enabled) return;
  if (jobsInProgress.length === 0) {
    if (rules.replaceIdle) need(ctx, liveObjects);
    return;
  }
  propose(ctx, {
    rule: 'warnedNode',
    scope,
    cause: null,
    signal: w.signal,
    budgetKeys: [],
    key: idempotencyKey('mark-at-risk', r.cluster, r.namespace, r.name, r.podUid),
    target: {
      kind: 'mark-at-risk',
      cluster: r.cluster,
      namespace: r.namespace,
      runnerName: r.name,
      warning: w.kind,
    },
    reason: `${r.name} is running a job on a node about to go (${w.kind}): mark at risk`,
  });
}
