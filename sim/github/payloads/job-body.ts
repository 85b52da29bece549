import type { Job, Run } from '../model/types.js';
import type { ApiUrls } from './api-urls.js';
import { isoOrNull, isoSeconds } from './api-urls.js';

/** A job as both the REST API (`job`) and the `workflow_job` webhook carry it. */
export function jobBody(job: Job, run: Run, urls: ApiUrls) {
  const repoApi = `${urls.api}/repos/${run.repo.fullName}`;
  return {
    id: job.id,
    run_id: run.id,
    workflow_name: run.workflow.spec.name,
    head_branch: run.headBranch,
    run_url: `${repoApi}/actions/runs/${run.id}`,
    run_attempt: job.runAttempt,
    node_id: job.nodeId,
    head_sha: run.headSha,
    url: `${repoApi}/actions/jobs/${job.id}`,
    html_url: `${urls.web}/${run.repo.fullName}/actions/runs/${run.id}/job/${job.id}`,
    status: job.status,
    conclusion: job.conclusion,
    created_at: isoSeconds(job.createdAt),
    started_at: isoSeconds(job.startedAt),
    completed_at: isoOrNull(job.completedAt),
    name: job.name,
    steps: job.steps.map((step) => ({
      name: step.name,
      status: step.status,
      conclusion: step.conclusion,
      number: step.number,
      started_at: isoOrNull(step.startedAt),
      completed_at: isoOrNull(step.completedAt),
    })),
    check_run_url: `${repoApi}/check-runs/${job.id}`,
    labels: [...job.labels],
    runner_id: job.runnerId,
    runner_name: job.runnerName,
    runner_group_id: job.runnerGroupId,
    runner_group_name: job.runnerGroupName,
  };
}
