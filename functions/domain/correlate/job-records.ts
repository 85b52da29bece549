import type { EphemeralRunner, Pod } from '../model/cluster-facts.js';
import type { ErJobCacheEntry, RunnerOnNode } from '../model/facts.js';
import { isArcOwned, isArcRunnerPod, scaleSetOf } from './runner-guard.js';

/**
 * A cache entry for an EphemeralRunner's job fields, to store when first seen: ARC deletes an ER
 * with a job quickly once its pod fails. Null when it has no job or is not ARC's.
 */
export function erJobCacheEntry(er: EphemeralRunner, seenAt: number): ErJobCacheEntry | null {
  const j = er.job;
  if (!isArcOwned(er.metadata) || !(j.jobId || j.jobRepositoryName || j.workflowRunId)) return null;
  return {
    cluster: er.cluster,
    namespace: er.metadata.namespace,
    runnerName: er.metadata.name,
    scaleSet: scaleSetOf(er.metadata),
    runnerId: er.runnerId,
    job: j,
    seenAt,
  };
}

/**
 * An ARC runner on its node, as recorded once it runs a job: where a node signal finds it, and,
 * with its EphemeralRunner's job fields once it has them, its job cache. Null unless its pod is
 * bound and proven the EphemeralRunner's.
 */
export function runnerOnNodeOf(er: EphemeralRunner, pod: Pod, seenAt: number): RunnerOnNode | null {
  if (!isArcOwned(er.metadata) || pod.nodeName === null || !isArcRunnerPod(pod, er)) return null;
  const entry = erJobCacheEntry(er, seenAt);
  return {
    cluster: er.cluster,
    namespace: er.metadata.namespace,
    name: er.metadata.name,
    nodeName: pod.nodeName,
    podUid: pod.metadata.uid,
    ephemeralRunnerUid: er.metadata.uid,
    scaleSet: scaleSetOf(er.metadata),
    runnerId: er.runnerId,
    seenAt,
    ...(entry ? { job: entry.job } : {}),
  };
}

/** The job cache a runner's record on its node holds; null for a record with no job. */
export function erJobCacheOf(r: RunnerOnNode): ErJobCacheEntry | null {
  if (!r.job) return null;
  return {
    cluster: r.cluster,
    namespace: r.namespace,
    runnerName: r.name,
    scaleSet: r.scaleSet,
    runnerId: r.runnerId,
    job: r.job,
    seenAt: r.seenAt,
  };
}
