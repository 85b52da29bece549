import type { JobAnnotation } from '../classify/annotations.js';
import type { EphemeralRunner } from '../model/cluster-facts.js';
import type { ErJobCacheEntry, JobRecord, RunRecord } from '../model/facts.js';
import type { GithubObservation, JobObservation } from '../model/observation.js';
import { isArcOwned, scaleSetOf } from './runner-guard.js';

const STAGE: Record<string, number> = { queued: 0, waiting: 0, in_progress: 1, completed: 2 };
const stage = (o: JobObservation) => STAGE[o.job.status] ?? (o.kind === 'job.completed' ? 2 : 0);

/**
 * The latest state of each job from its observations, whatever order they arrived in: a later
 * attempt wins, then the further stage (completed > in_progress > queued), then the later receipt.
 */
export function jobRecordsFrom(
  observations: readonly GithubObservation[],
  annotations: ReadonlyMap<number, JobAnnotation[]> = new Map(),
): JobRecord[] {
  const latest = new Map<number, JobObservation>();
  for (const o of observations) {
    if (o.kind === 'run.completed') continue;
    const prev = latest.get(o.job.jobId);
    const newer =
      !prev ||
      o.job.runAttempt > prev.job.runAttempt ||
      (o.job.runAttempt === prev.job.runAttempt &&
        (stage(o) > stage(prev) || (stage(o) === stage(prev) && o.receivedAt >= prev.receivedAt)));
    if (newer) latest.set(o.job.jobId, o);
  }
  return [...latest.values()].map((o) => ({
    repository: o.repository,
    installationId: o.installationId,
    job: o.job,
    annotations: annotations.get(o.job.jobId) ?? null,
  }));
}

export function runRecordsFrom(observations: readonly GithubObservation[]): RunRecord[] {
  const out = new Map<string, RunRecord>();
  for (const o of observations)
    if (o.kind === 'run.completed')
      out.set(`${o.repository.fullName}#${o.run.runId}#${o.run.runAttempt}`, {
        repository: o.repository,
        installationId: o.installationId,
        run: o.run,
      });
  return [...out.values()];
}

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
