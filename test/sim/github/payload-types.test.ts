import type { RestEndpointMethodTypes } from '@octokit/plugin-rest-endpoint-methods';
import type { EmitterWebhookEvent } from '@octokit/webhooks';
import { organizationBody, userBody } from '../../../sim/github/payloads/account-body.js';
import { GITHUB_URLS } from '../../../sim/github/payloads/api-urls.js';
import { jobBody } from '../../../sim/github/payloads/job-body.js';
import { repositoryBody } from '../../../sim/github/payloads/repository-body.js';
import { runBody, workflowBody } from '../../../sim/github/payloads/run-body.js';
import { MINUTE, REPO, SCALE_SET, buildWorld } from './sim-fixture.js';

// These annotations make `npm run typecheck` hold the builders to octokit's own types.
type RestJob = RestEndpointMethodTypes['actions']['getJobForWorkflowRun']['response']['data'];
type RestRun = RestEndpointMethodTypes['actions']['getWorkflowRun']['response']['data'];
type JobQueued = EmitterWebhookEvent<'workflow_job.queued'>['payload'];
type JobCompleted = EmitterWebhookEvent<'workflow_job.completed'>['payload'];
type RunCompleted = EmitterWebhookEvent<'workflow_run.completed'>['payload'];

describe('GitHub twin payload builders', () => {
  it('build bodies assignable to octokit’s REST and webhook types, from the model’s state', async () => {
    const { sim, clock, startRunner } = buildWorld({
      name: 'ci',
      jobs: [{ name: 'build', runsOn: SCALE_SET, durationMs: MINUTE }],
    });
    const { runId, jobIds } = sim.triggerRun(REPO, 'ci');
    startRunner();
    await clock.advance(MINUTE);
    const run = sim.run(runId);
    const job = sim.job(jobIds[0] ?? 0);
    if (!run || !job) throw new Error('run and job exist');

    const restJob: RestJob = jobBody(job, run, GITHUB_URLS);
    const restRun: RestRun = runBody(run, GITHUB_URLS);
    // The generated `workflow_job.completed` type mangles `steps`; the queued one carries the common shape.
    const webhookJob: JobQueued['workflow_job'] = jobBody(job, run, GITHUB_URLS);
    const webhookRun: RunCompleted['workflow_run'] = {
      ...runBody(run, GITHUB_URLS),
      status: 'completed',
      conclusion: 'success',
    };
    const repository: JobCompleted['repository'] = repositoryBody(run.repo, GITHUB_URLS);
    const sender: JobCompleted['sender'] = userBody(run.actor, GITHUB_URLS);
    const organization: JobCompleted['organization'] = organizationBody(
      run.repo.owner,
      GITHUB_URLS,
    );
    const workflow: RunCompleted['workflow'] = workflowBody(run, GITHUB_URLS);

    expect(restJob).toMatchObject({
      id: job.id,
      run_id: runId,
      status: 'completed',
      conclusion: 'success',
    });
    expect(restRun).toMatchObject({
      id: runId,
      status: 'completed',
      conclusion: 'success',
      run_attempt: 1,
    });
    expect(webhookJob.check_run_url).toBe(
      `https://api.github.com/repos/${REPO}/check-runs/${job.id}`,
    );
    expect(webhookRun.jobs_url).toBe(
      `https://api.github.com/repos/${REPO}/actions/runs/${runId}/jobs`,
    );
    expect(repository.archive_url).toBe(
      `https://api.github.com/repos/${REPO}/{archive_format}{/ref}`,
    );
    expect(sender.login).toBe('octocat');
    expect(organization?.login).toBe('acme');
    expect(workflow.path).toBe('.github/workflows/ci.yml');
  });
});
