import type { ActionTarget } from '../domain/model/action.js';
import type { ClusterGateways } from '../ports/cluster-gateway.js';
import type { FactsStore } from '../ports/facts-store.js';
import type { GithubGateway } from '../ports/github-gateway.js';
import { remediationEvent } from './remediation-event.js';

export interface StaleClaimDeps {
  store: FactsStore;
  clusters: ClusterGateways;
  github: GithubGateway;
}

/**
 * A claim without a result means an invocation died between claiming an action and recording
 * what happened. Before anything is repeated, ask the API whether the effect is in place: if so
 * the action succeeded; if not it failed, and the rules may try it again under a new key.
 */
export async function recoverStaleClaims(
  deps: StaleClaimDeps,
  now: number,
  staleAfterMs: number,
): Promise<{ key: string; effectInPlace: boolean }[]> {
  const recovered: { key: string; effectInPlace: boolean }[] = [];
  for (const claim of await deps.store.staleClaims(now, staleAfterMs)) {
    const effectInPlace = await effectVisible(claim.target, deps);
    const outcome = effectInPlace ? 'succeeded' : 'failed';
    const detail = effectInPlace
      ? 'result lost; re-checked: the effect is in place'
      : 'result lost; re-checked: not done, may be retried';
    // The audit event the dead invocation never stored goes to the outbox with the result.
    const event = claim.action ? remediationEvent(claim.action, outcome, detail, now) : null;
    await deps.store.finishAction(
      claim.key,
      outcome,
      now,
      detail,
      event
        ? { detailType: event.detailType, detail: event.detail as Record<string, unknown> }
        : undefined,
    );
    recovered.push({ key: claim.key, effectInPlace });
  }
  return recovered;
}

async function effectVisible(t: ActionTarget, deps: StaleClaimDeps): Promise<boolean> {
  switch (t.kind) {
    case 'delete-ephemeral-runner':
    case 'remove-finalizer': {
      const gw = await deps.clusters.forCluster(t.cluster);
      const er = await gw.getEphemeralRunner(t.namespace, t.name);
      if (!er || er.metadata.uid !== t.uid) return true;
      if (t.kind === 'remove-finalizer')
        return !t.finalizers.some((f) => er.metadata.finalizers.includes(f));
      return er.metadata.deletionTimestamp !== null;
    }
    case 'delete-pod': {
      const gw = await deps.clusters.forCluster(t.cluster);
      const pod = await gw.getPod(t.namespace, t.name);
      return !pod || pod.metadata.uid !== t.uid || pod.metadata.deletionTimestamp !== null;
    }
    case 'rerun-failed-jobs':
    case 'rerun-job':
    case 'cancel-run':
    case 'force-cancel-run': {
      const run = await deps.github.getRun(t, t.runId);
      if (!run) return false;
      if (run.runAttempt > t.runAttempt) return true;
      return (
        (t.kind === 'cancel-run' || t.kind === 'force-cancel-run') && run.status === 'completed'
      );
    }
    case 'delete-runner-registration': {
      const runners = await deps.github.listRunners(t.owner, t.installationId);
      return !runners.some((r) => r.id === t.runnerId);
    }
    default:
      return true;
  }
}
