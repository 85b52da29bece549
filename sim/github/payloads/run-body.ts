import type { Run } from '../model/types.js';
import type { ApiUrls } from './api-urls.js';
import { isoSeconds } from './api-urls.js';
import { userBody } from './account-body.js';
import { minimalRepositoryBody } from './repository-body.js';

/** A workflow run as the REST API and the `workflow_run` webhook carry it. */
export function runBody(run: Run, urls: ApiUrls) {
  const repoApi = `${urls.api}/repos/${run.repo.fullName}`;
  const runApi = `${repoApi}/actions/runs/${run.id}`;
  const repository = minimalRepositoryBody(run.repo, urls);
  return {
    id: run.id,
    name: run.workflow.spec.name,
    node_id: run.nodeId,
    head_branch: run.headBranch,
    head_sha: run.headSha,
    path: run.workflow.path,
    display_title: `${run.workflow.spec.name} #${run.runNumber}`,
    run_number: run.runNumber,
    event: run.event,
    status: run.status,
    conclusion: run.conclusion,
    workflow_id: run.workflow.id,
    check_suite_id: run.checkSuiteId,
    check_suite_node_id: run.checkSuiteNodeId,
    url: runApi,
    html_url: `${urls.web}/${run.repo.fullName}/actions/runs/${run.id}`,
    pull_requests: [],
    created_at: isoSeconds(run.createdAt),
    updated_at: isoSeconds(run.updatedAt),
    actor: userBody(run.actor, urls),
    triggering_actor: userBody(run.triggeringActor, urls),
    run_attempt: run.attempt,
    referenced_workflows: [],
    run_started_at: isoSeconds(run.runStartedAt),
    jobs_url: `${runApi}/jobs`,
    logs_url: `${runApi}/logs`,
    check_suite_url: `${repoApi}/check-suites/${run.checkSuiteId}`,
    artifacts_url: `${runApi}/artifacts`,
    cancel_url: `${runApi}/cancel`,
    rerun_url: `${runApi}/rerun`,
    previous_attempt_url: run.attempt > 1 ? `${runApi}/attempts/${run.attempt - 1}` : null,
    workflow_url: `${repoApi}/actions/workflows/${run.workflow.id}`,
    head_commit: {
      id: run.headSha,
      tree_id: run.headSha.split('').reverse().join(''),
      message: `Change ${run.headSha.slice(0, 7)}`,
      timestamp: isoSeconds(run.createdAt),
      author: { name: run.actor.login, email: `${run.actor.login}@users.noreply.github.com` },
      committer: { name: 'GitHub', email: 'noreply@github.com' },
    },
    repository,
    head_repository: repository,
  };
}

/** The `workflow` block of a `workflow_run` webhook. */
export function workflowBody(run: Run, urls: ApiUrls) {
  const workflow = run.workflow;
  return {
    id: workflow.id,
    node_id: workflow.nodeId,
    name: workflow.spec.name,
    path: workflow.path,
    state: 'active',
    created_at: isoSeconds(workflow.createdAt),
    updated_at: isoSeconds(workflow.createdAt),
    url: `${urls.api}/repos/${run.repo.fullName}/actions/workflows/${workflow.id}`,
    html_url: `${urls.web}/${run.repo.fullName}/blob/${run.repo.defaultBranch}/${workflow.path}`,
    badge_url: `${urls.web}/${run.repo.fullName}/workflows/${encodeURIComponent(workflow.spec.name)}/badge.svg`,
  };
}
