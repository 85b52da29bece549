import type {
  GithubObservation,
  JobObservationKind,
} from '../../../functions/domain/model/observation.js';
import type { GitHubSim } from '../../../sim/github/github-sim.js';
import type { Job, Run } from '../../../sim/github/model/types.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const JOB_KINDS: Record<string, JobObservationKind> = {
  queued: 'job.queued',
  waiting: 'job.waiting',
  in_progress: 'job.started',
  completed: 'job.completed',
};

/** Records the GitHub twin's changes as the observations runner-medic's ingress would publish. */
export function observe(github: GitHubSim, installationId: number): GithubObservation[] {
  const seen: GithubObservation[] = [];
  let n = 0;
  github.on((event) => {
    const repo = event.run.repo;
    const base = {
      deliveryId: `obs-${n++}`,
      installationId,
      repository: {
        id: repo.id,
        fullName: repo.fullName,
        owner: repo.owner.login,
        name: repo.name,
      },
      receivedAt: iso(event.at) ?? '',
    };
    if (event.type === 'workflow_job') {
      const kind = JOB_KINDS[event.action];
      if (kind) seen.push({ kind, ...base, job: jobFacts(event.job, event.run) });
    } else if (event.action === 'completed') {
      const run = event.run;
      seen.push({
        kind: 'run.completed',
        ...base,
        run: {
          runId: run.id,
          runAttempt: run.attempt,
          name: run.workflow.spec.name,
          status: run.status,
          conclusion: run.conclusion,
          event: run.event,
          htmlUrl: `https://github.com/${repo.fullName}/actions/runs/${run.id}`,
          createdAt: iso(run.createdAt) ?? '',
          updatedAt: iso(run.updatedAt) ?? '',
          runStartedAt: iso(run.runStartedAt),
        },
      });
    }
  });
  return seen;
}

function jobFacts(job: Job, run: Run) {
  return {
    jobId: job.id,
    runId: job.runId,
    runAttempt: job.runAttempt,
    name: job.name,
    workflowName: run.workflow.spec.name,
    headBranch: run.headBranch,
    labels: job.labels,
    status: job.status,
    conclusion: job.conclusion,
    runnerId: job.runnerId,
    runnerName: job.runnerName,
    runnerGroupId: job.runnerGroupId,
    runnerGroupName: job.runnerGroupName,
    htmlUrl: `https://github.com/${run.repo.fullName}/actions/runs/${run.id}/job/${job.id}`,
    createdAt: iso(job.createdAt),
    startedAt: iso(job.startedAt),
    completedAt: iso(job.completedAt),
  };
}
