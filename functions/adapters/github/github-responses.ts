import { z } from 'zod';
import type { JobAnnotation } from '../../domain/annotations.js';
import type { RunnerRegistration } from '../../domain/facts.js';
import type { JobFacts, RunFacts } from '../../domain/observation.js';
import type { RunnerOwner } from '../../ports/github-gateway.js';
import { GithubResponseError } from './github-errors.js';

/** GitHub ids exceed 2^31 but stay exact below 2^53. */
const id = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const text = z.string().nullable();

export const jobSchema = z.object({
  id,
  run_id: id,
  run_attempt: z.number().int().positive().default(1),
  name: z.string(),
  workflow_name: text.optional(),
  head_branch: text.optional(),
  labels: z.array(z.string()),
  status: z.string(),
  conclusion: text,
  runner_id: id.nullable().optional(),
  runner_name: text.optional(),
  runner_group_id: id.nullable().optional(),
  runner_group_name: text.optional(),
  html_url: text,
  created_at: text.optional(),
  started_at: text.optional(),
  completed_at: text.optional(),
});

export const runSchema = z.object({
  id,
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

export const jobsPageSchema = z.object({
  total_count: z.number().int().nonnegative(),
  jobs: z.array(jobSchema),
});

export const annotationsPageSchema = z.array(
  z.object({
    annotation_level: z.string(),
    message: z.string(),
    path: text.optional(),
    title: text.optional(),
  }),
);

const runnerSchema = z.object({
  id,
  name: z.string(),
  status: z.string(),
  busy: z.boolean(),
  labels: z.array(z.object({ name: z.string() })),
});

export const runnersPageSchema = z.object({
  total_count: z.number().int().nonnegative(),
  runners: z.array(runnerSchema),
});

export const installationSchema = z.object({ id: id.positive() });

/** Parses a 2xx body, or throws GithubResponseError naming every bad path. */
export function parseBody<T extends z.ZodType>(
  schema: T,
  body: unknown,
  what: string,
): z.output<T> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const paths = [
    ...new Set(parsed.error.issues.map((issue) => issue.path.map(String).join('.') || '(root)')),
  ];
  throw new GithubResponseError(`${what}: unexpected response at ${paths.join(', ')}`, {
    cause: parsed.error,
  });
}

export function toJobFacts(job: z.output<typeof jobSchema>): JobFacts {
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

export function toRunFacts(run: z.output<typeof runSchema>): RunFacts {
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

export function toJobAnnotation(
  annotation: z.output<typeof annotationsPageSchema>[number],
): JobAnnotation {
  return {
    annotation_level: annotation.annotation_level,
    message: annotation.message,
    path: annotation.path ?? null,
    title: annotation.title ?? null,
  };
}

export function toRunnerRegistration(
  runner: z.output<typeof runnerSchema>,
  owner: RunnerOwner,
  installationId: number | null,
): RunnerRegistration {
  return {
    id: runner.id,
    name: runner.name,
    status: runner.status,
    busy: runner.busy,
    labels: runner.labels.map((label) => label.name),
    owner,
    installationId,
    offlineSince: null,
  };
}
