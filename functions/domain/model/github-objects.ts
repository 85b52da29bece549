import * as z from 'zod';
import { githubId, type JobFacts, type RunFacts } from './observation.js';

/**
 * GitHub's workflow job and run objects, as webhooks and the REST API both carry them, parsed
 * into runner-medic's facts. Ids exceed 2^31 but stay exact below 2^53.
 */
export { MAX_DELIVERY_ID_LENGTH, githubId } from './observation.js';

const text = z.string().nullable();

export const githubJobSchema = z.object({
  id: githubId,
  run_id: githubId,
  // Absent in GitHub's oldest example payloads; those are first attempts.
  run_attempt: z.number().int().positive().default(1),
  name: z.string(),
  workflow_name: text.optional(),
  head_branch: text.optional(),
  labels: z.array(z.string()),
  status: z.string(),
  conclusion: text,
  runner_id: githubId.nullable().optional(),
  runner_name: text.optional(),
  runner_group_id: githubId.nullable().optional(),
  runner_group_name: text.optional(),
  html_url: text,
  created_at: text.optional(),
  started_at: text.optional(),
  completed_at: text.optional(),
});

export const githubRunSchema = z.object({
  id: githubId,
  run_attempt: z.number().int().positive().default(1),
  name: text.optional(),
  status: z.string(),
  conclusion: text,
  event: text.optional(),
  html_url: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  run_started_at: text.optional(),
});

export function toJobFacts(job: z.output<typeof githubJobSchema>): JobFacts {
  return {
    jobId: job.id,
    runId: job.run_id,
    runAttempt: job.run_attempt,
    name: job.name,
    workflowName: job.workflow_name ?? null,
    headBranch: job.head_branch ?? null,
    labels: job.labels,
    status: job.status,
    conclusion: job.conclusion,
    runnerId: job.runner_id ?? null,
    runnerName: job.runner_name ?? null,
    runnerGroupId: job.runner_group_id ?? null,
    runnerGroupName: job.runner_group_name ?? null,
    htmlUrl: job.html_url ?? '',
    createdAt: job.created_at ?? job.started_at ?? null,
    startedAt: job.started_at ?? null,
    completedAt: job.completed_at ?? null,
  };
}

export function toRunFacts(run: z.output<typeof githubRunSchema>): RunFacts {
  return {
    runId: run.id,
    runAttempt: run.run_attempt,
    name: run.name ?? null,
    status: run.status,
    conclusion: run.conclusion,
    event: run.event ?? null,
    htmlUrl: run.html_url,
    createdAt: run.created_at,
    updatedAt: run.updated_at,
    runStartedAt: run.run_started_at ?? null,
  };
}
