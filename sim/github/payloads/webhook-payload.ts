import type { GitHubEvent } from '../model/github-event.js';
import type { Installation } from '../model/types.js';
import type { ApiUrls } from './api-urls.js';
import { organizationBody, userBody } from './account-body.js';
import { jobBody } from './job-body.js';
import { repositoryBody } from './repository-body.js';
import { runBody, workflowBody } from './run-body.js';

/** The JSON body GitHub posts for an event, built at the moment of the event. */
export function webhookPayload(
  event: GitHubEvent,
  installation: Installation | undefined,
  urls: ApiUrls,
) {
  const run = event.run;
  const common = {
    repository: repositoryBody(run.repo, urls),
    ...(run.repo.owner.type === 'Organization'
      ? { organization: organizationBody(run.repo.owner, urls) }
      : {}),
    sender: userBody(run.triggeringActor, urls),
    ...(installation
      ? { installation: { id: installation.id, node_id: installationNodeId(installation.id) } }
      : {}),
  };
  if (event.type === 'workflow_job') {
    return { action: event.action, workflow_job: jobBody(event.job, run, urls), ...common };
  }
  return {
    action: event.action,
    workflow_run: runBody(run, urls),
    workflow: workflowBody(run, urls),
    ...common,
  };
}

function installationNodeId(id: number): string {
  return Buffer.from(`023:IntegrationInstallation${id}`).toString('base64');
}
