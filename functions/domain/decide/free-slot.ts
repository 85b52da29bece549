import type { RunnerView } from '../correlate/correlate.js';
import { idempotencyKey } from '../model/idempotency-key.js';
import { describeCause } from '../model/loss.js';
import type { RuleName } from './rules/index.js';
import { isProvenArcRunner } from '../correlate/runner-guard.js';
import { graceStart } from './grace.js';
import { REGISTRATION_RETRY, retryState } from './retry.js';
import {
  effectiveFor,
  need,
  nodeDown,
  propose,
  runnerScope,
  wake,
  type RuleContext,
} from './context.js';

const ORG_LABEL = 'actions.github.com/organization';
const REPO_LABEL = 'actions.github.com/repository';

function registrationOwner(v: RunnerView): { org: string } | { repo: string } | null {
  const labels = v.er?.metadata.labels ?? {};
  const org = labels[ORG_LABEL];
  const repo = labels[REPO_LABEL];
  if (org && repo) return { repo: `${org}/${repo}` };
  return org ? { org } : null;
}

/** Force-delete the pod of a runner on a NotReady or deleted node: its kubelet cannot. */
function forceDeleteDeadPod(ctx: RuleContext, v: RunnerView, rule: RuleName): void {
  const pod = v.pod;
  const rules = effectiveFor(ctx, runnerScope(v)).rules.freePoisonedSlot;
  if (!pod || !nodeDown(v) || !rules.forceDeletePodOnDeadNode) return;
  propose(ctx, {
    rule,
    key: idempotencyKey('delete-pod', v.cluster, v.namespace, v.name, pod.metadata.uid, 'force'),
    target: {
      kind: 'delete-pod',
      force: true,
      cluster: v.cluster,
      namespace: v.namespace,
      name: v.name,
      uid: pod.metadata.uid,
    },
    scope: runnerScope(v),
    cause: v.loss?.cause ?? null,
    signal: v.loss?.signal ?? null,
    reason: `${v.name}: pod on ${v.nodeName ?? 'a'} node that is NotReady or gone; force delete (grace 0)`,
    budgetKeys: [],
  });
}

/** An EphemeralRunner stuck deleting: strip its finalizers (explicit policy only), deregister. */
function stuckDeletion(ctx: RuleContext, v: RunnerView, rule: RuleName): void {
  const er = v.er;
  const after = effectiveFor(ctx, runnerScope(v)).rules.freePoisonedSlot
    .removeStuckFinalizerAfterSeconds;
  if (!er?.metadata.deletionTimestamp || after === null || er.metadata.finalizers.length === 0)
    return;
  const due = er.metadata.deletionTimestamp + after * 1000;
  if (ctx.now < due) return wake(ctx, due, v);
  const { cluster, namespace, name, uid } = { ...v, uid: er.metadata.uid };
  propose(ctx, {
    rule,
    key: idempotencyKey('remove-finalizer', cluster, namespace, name, uid),
    target: {
      kind: 'remove-finalizer',
      finalizers: er.metadata.finalizers,
      cluster,
      namespace,
      name,
      uid,
    },
    scope: runnerScope(v),
    cause: v.loss?.cause ?? null,
    signal: v.loss?.signal ?? null,
    reason: `${name}: EphemeralRunner stuck deleting for over ${after} s; remove its finalizers`,
    budgetKeys: [],
  });
  const owner = registrationOwner(v);
  if (v.runnerId === null || !owner) return;
  const { intervalSeconds, forSeconds } = REGISTRATION_RETRY;
  const st = retryState(
    ctx,
    idempotencyKey('delete-registration', v.runnerId),
    intervalSeconds,
    forSeconds,
  );
  if (st.state === 'wait') wake(ctx, st.at);
  if (st.state !== 'go') return;
  propose(ctx, {
    rule,
    key: st.key,
    target: {
      kind: 'delete-runner-registration',
      owner,
      installationId: null,
      runnerId: v.runnerId,
      runnerName: name,
    },
    scope: runnerScope(v),
    cause: v.loss?.cause ?? null,
    signal: v.loss?.signal ?? null,
    reason: `${name}: finalizer removed; deregister runner ${v.runnerId} on GitHub`,
    budgetKeys: [],
  });
}

/**
 * Free the slot of one lost runner: delete its EphemeralRunner (uid precondition) once the
 * grace period has passed, so ARC creates a replacement. `skipGrace` for a starving queue.
 * Returns whether the runner holds a slot that can be (or is being) freed.
 */
export function freeSlot(
  ctx: RuleContext,
  v: RunnerView,
  rule: RuleName,
  skipGrace: boolean,
): boolean {
  const loss = v.loss;
  if (!v.arcOwned || !loss) return false;
  const since = graceStart(v);
  if (since === null) return false;
  const er = v.er;
  if (!er) {
    const listed = ctx.facts.listings.some(
      (l) => l.cluster === v.cluster && l.namespace === v.namespace && l.at >= since,
    );
    if (!listed)
      need(ctx, {
        kind: 'ephemeral-runner',
        cluster: v.cluster,
        namespace: v.namespace,
        name: v.name,
      });
    return false;
  }
  // Asking for the EphemeralRunner is harmless; acting needs the pod proven to be its.
  if (!isProvenArcRunner(v)) return false;
  if (er.metadata.deletionTimestamp !== null) {
    forceDeleteDeadPod(ctx, v, rule);
    stuckDeletion(ctx, v, rule);
    return true;
  }
  if (er.phase === 'Succeeded') return false;
  const rules = effectiveFor(ctx, runnerScope(v)).rules.freePoisonedSlot;
  // ARC ≥ 0.15 frees a killed runner's slot itself within a second: deleting it at once would
  // race ARC's own delete, so its grace is the ordinary one.
  const arcFreesIt = v.arcDeletesKilled && loss.cause.kind === 'runner-killed';
  const grace =
    v.arcWontRecover && !arcFreesIt ? rules.arcWontRecoverGraceSeconds : rules.graceSeconds;
  const due = since + grace * 1000;
  if (!skipGrace && ctx.now < due) {
    wake(ctx, due, v);
    return true;
  }
  propose(ctx, {
    rule,
    key: idempotencyKey('delete-ephemeral-runner', v.cluster, v.namespace, v.name, er.metadata.uid),
    target: {
      kind: 'delete-ephemeral-runner',
      cluster: v.cluster,
      namespace: v.namespace,
      name: v.name,
      uid: er.metadata.uid,
    },
    scope: runnerScope(v),
    cause: loss.cause,
    signal: loss.signal,
    reason:
      `${v.name}: ${describeCause(loss.cause)}, ${v.busy ? 'had a job' : 'no job'}; ` +
      (skipGrace
        ? 'a queued job is starving; delete the EphemeralRunner now so ARC creates a replacement'
        : v.arcWontRecover
          ? `${v.legacyArc ? 'ARC ≤ 0.11 never frees it' : 'its JIT config is spent, ARC would re-create a dead pod (actions-runner-controller#4588)'}; delete the EphemeralRunner so ARC creates a replacement`
          : `ARC did not free the slot within ${grace} s; delete the EphemeralRunner so ARC creates a replacement`),
    budgetKeys: [],
  });
  forceDeleteDeadPod(ctx, v, rule);
  return true;
}
