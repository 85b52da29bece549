import { actionJobIds } from '../domain/model/action-job-ids.js';
import type { Action } from '../domain/model/action.js';
import type { Facts } from '../domain/model/facts.js';

/**
 * When the runner behind an action was lost: the earliest loss recorded for it, else (for a job
 * found lost through its annotations) when GitHub failed the job, for any job the action names
 * (a run's `jobIds`, or a per-job re-run's `jobId`).
 */
export function lossTime(action: Action, facts: Facts): number | null {
  const { cluster, namespace, runnerName } = action.scope;
  const fromLosses = facts.losses
    .filter(
      (l) => l.cluster === cluster && l.namespace === namespace && l.runnerName === runnerName,
    )
    .map((l) => l.at);
  const jobIds = actionJobIds(action.target);
  const fromJobs = facts.jobs
    .filter((j) => jobIds.includes(j.job.jobId) && j.job.completedAt !== null)
    .map((j) => Date.parse(j.job.completedAt ?? ''));
  const times = [...fromLosses, ...fromJobs].filter(
    (at): at is number => at !== null && Number.isFinite(at),
  );
  return times.length > 0 ? Math.min(...times) : null;
}
