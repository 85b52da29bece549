import type { ObjectMeta, Pod } from '../model/cluster-facts.js';
import type { Loss, LossCause, Signal } from '../model/loss.js';
import { isArcOwned, isRunnerPod, scaleSetOf } from '../correlate/runner-guard.js';

/** The runner's objects a loss was read from (metadata only); absent when not read. */
export interface LossEvidence {
  pod?: Pick<ObjectMeta, 'name' | 'labels' | 'ownerReferences'> | null;
  er?: Pick<ObjectMeta, 'labels' | 'ownerReferences'> | null;
}

/**
 * Whether the objects a loss was read from are ARC's: the pod passes the runner-pod guard and the
 * EphemeralRunner is owned by an EphemeralRunnerSet, each when present. Null when neither was
 * read (an event without the exporter's lookup carries no labels): unknown, not false.
 */
function ownedByArc({ pod, er }: LossEvidence): boolean | null {
  if (!pod && !er) return null;
  return (!pod || isRunnerPod(pod)) && (!er || isArcOwned(er));
}

export interface LossFacts {
  cluster: string;
  namespace: string;
  runnerName: string;
  podUid?: string | null;
  nodeName?: string | null;
  scaleSet: string | null;
  cause: LossCause;
  signal: Signal;
  at: number | null;
}

/** The one way to make a `Loss`: its facts, and the objects that say whether the runner is ARC's. */
export function runnerLoss(facts: LossFacts, evidence: LossEvidence): Loss {
  const { podUid = null, nodeName = null, ...rest } = facts;
  return { ...rest, podUid, nodeName, ownedByArc: ownedByArc(evidence) };
}

/** Where a loss read from a pod happened: the pod's cluster, namespace, name, uid, node and set. */
export const podLossFacts = (pod: Pod) => ({
  cluster: pod.cluster,
  namespace: pod.metadata.namespace,
  runnerName: pod.metadata.name,
  podUid: pod.metadata.uid || null,
  nodeName: pod.nodeName,
  scaleSet: scaleSetOf(pod.metadata),
});
