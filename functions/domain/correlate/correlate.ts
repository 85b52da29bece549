import type { Facts, JobRecord } from '../model/facts.js';
import { runKey, type Correlation } from './correlation.js';
import { jobRunnerView } from './runner-of-job.js';
import { keepCurrentLosses, lossesFromObjects, placeOnNode, rankLosses } from './runner-losses.js';
import type { RunnerView } from './runner-view.js';
import { gatherViews, identify, indexViews, pushTo, viewKey } from './runner-views.js';
import { rememberedRunners } from './runners-on-nodes.js';

export type { Correlation } from './correlation.js';
export { runAttemptKey, runKey } from './correlation.js';
export type { RunnerView } from './runner-view.js';
export { runnerOfJob, runnersForJob, runnersOnInstance } from './runner-of-job.js';

/**
 * Step 4: each job to the one runner it ran on, by identity (runner-of-job.ts), and the jobs of
 * each run together.
 */
export function joinJobs(
  jobs: readonly JobRecord[],
  index: Pick<Correlation, 'byName' | 'byRunnerId' | 'byErRun'>,
): Map<string, JobRecord[]> {
  const jobsByRun = new Map<string, JobRecord[]>();
  for (const j of jobs) {
    pushTo(jobsByRun, runKey(j.repository.fullName, j.job.runId), j);
    jobRunnerView(index, j)?.jobs.push(j);
  }
  return jobsByRun;
}

/**
 * Join jobs, runners, pods, EphemeralRunners and nodes (DESIGN.md §3), step by step: a runner's
 * objects by cluster, namespace and name (1), its identity (2, 3); a job to its runner by
 * identity (4: runner id, then ER job fields, then a name only one proven ARC runner has); its
 * losses, stored (5) and read from the live objects (6); its node through providerID (7); its
 * main loss (8); runners by scale set through the jobs' labels.
 */
export function correlate(facts: Facts, now: number): Correlation {
  const { views, cached } = gatherViews(facts);
  for (const v of views.values()) identify(v, cached.get(viewKey(v.cluster, v.namespace, v.name)));
  const index = indexViews(views.values());
  const jobsByRun = joinJobs(facts.jobs, index);
  const registrations = new Map(facts.registrations.map((r) => [r.id, r]));
  for (const v of views.values()) {
    v.busy = v.jobFields !== null || v.jobs.length > 0;
    v.losses = [...keepCurrentLosses(v, facts.nodes), ...lossesFromObjects(v, registrations, now)];
    placeOnNode(v, facts, now);
    rankLosses(v);
  }
  const runners = [...views.values()];
  const byScaleSet = new Map<string, RunnerView[]>();
  for (const v of runners) if (v.scaleSet) pushTo(byScaleSet, v.scaleSet.toLowerCase(), v);
  const remembered = rememberedRunners(facts, now);
  return { runners, remembered, ...index, byScaleSet, jobsByRun };
}
