import type { GitHubStore } from './github-store.js';
import { nodeId } from './id-source.js';
import type { ExpandedJob } from './job-names.js';
import { matchesMatrix } from './job-names.js';
import type { Job, Run } from './types.js';

/** A new execution of a job in the run's current attempt, queued, with no runner. */
export function createJob(store: GitHubStore, run: Run, expanded: ExpandedJob, now: number): Job {
  const id = store.ids.next('job');
  const runsOn = expanded.spec.runsOn;
  const fails = expanded.spec.fails;
  return {
    id,
    guid: store.ids.guid(),
    nodeId: nodeId('CR', id),
    runId: run.id,
    runAttempt: run.attempt,
    name: expanded.name,
    spec: expanded.spec,
    matrix: expanded.matrix ?? null,
    labels: typeof runsOn === 'string' ? [runsOn] : [...runsOn],
    status: 'queued',
    conclusion: null,
    createdAt: now,
    startedAt: now,
    completedAt: null,
    runnerId: null,
    runnerName: null,
    runnerGroupId: null,
    runnerGroupName: null,
    steps: [],
    annotations: [],
    runnerRequestId: store.ids.next('request'),
    cancelRequested: false,
    lockRenewedAt: null,
    failsOnItsOwn:
      fails !== undefined &&
      matchesMatrix(expanded.matrix, fails.matrix) &&
      (fails.attempts === undefined || fails.attempts.includes(run.attempt)),
  };
}
