import type { EphemeralRunner, Pod } from '../model/cluster-facts.js';
import type { JobRecord } from '../model/facts.js';
import type { Loss } from '../model/loss.js';
import { scaleSetOf } from '../correlate/runner-guard.js';
import { podLossFacts, runnerLoss } from './runner-loss.js';

/** A runner exits seconds after its job; still alive this long after, it never will. */
export const STUCK_AFTER_JOB_MS = 60_000;

/**
 * An ephemeral runner runs one job. Its job has completed, yet its EphemeralRunner is not being
 * deleted and its pod is still live: a hung runner (actions-runner-controller#4603) or a re-created
 * pod with a spent JIT config (actions-runner-controller#4588). Either way it holds a slot that
 * ARC will not free.
 */
export function classifyFinishedRunner(
  er: EphemeralRunner,
  pod: Pod,
  jobs: readonly JobRecord[],
  now: number,
): Loss | null {
  if (er.metadata.deletionTimestamp !== null) return null;
  if (pod.phase === 'Failed' || pod.phase === 'Succeeded') return null;
  const name = er.metadata.name;
  const done = jobs
    .filter((j) => j.job.runnerName === name && j.job.status === 'completed' && j.job.completedAt)
    .map((j) => ({ j, at: Date.parse(j.job.completedAt ?? '') }))
    .filter((x) => Number.isFinite(x.at))
    .sort((a, b) => a.at - b.at)[0];
  if (!done) return null;
  const at = done.at + STUCK_AFTER_JOB_MS;
  if (now < at) return null;
  return runnerLoss(
    {
      ...podLossFacts(pod),
      scaleSet: scaleSetOf(er.metadata),
      cause: { kind: 'runner-stuck' },
      signal: {
        source: 'runner-status',
        detail: `job ${done.j.job.jobId} ended ${done.j.job.conclusion ?? ''} at ${done.j.job.completedAt ?? ''}, pod still ${pod.phase ?? 'present'}`,
      },
      at,
    },
    { pod: pod.metadata, er: er.metadata },
  );
}
