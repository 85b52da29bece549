import type { EphemeralRunner } from '../model/cluster-facts.js';
import type { ErJobCacheEntry } from '../model/facts.js';
import { isArcOwned, scaleSetOf } from './runner-guard.js';

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
