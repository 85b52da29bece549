import { z } from 'zod';
import type {
  GithubObservation,
  JobObservationKind,
  RepositoryRef,
} from '../domain/observation.js';

export type NormalizeResult =
  | { kind: 'observation'; observation: GithubObservation }
  | { kind: 'ignored'; reason: string }
  | { kind: 'invalid'; missing: string[] };

const nullableString = z.string().nullable();
const id = z.number().int().nonnegative();
const nullableId = id.nullable();

const repositorySchema = z.object({
  id,
  full_name: z.string().min(3),
  name: z.string().min(1),
  owner: z.object({ login: z.string().min(1) }),
});

const installationSchema = z.object({ id }).nullish();

const workflowJobSchema = z.object({
  id,
  run_id: id,
  run_attempt: z.number().int().positive().default(1),
  name: z.string(),
  workflow_name: nullableString.optional(),
  head_branch: nullableString.optional(),
  labels: z.array(z.string()),
  status: z.string(),
  conclusion: nullableString,
  runner_id: nullableId.optional(),
  runner_name: nullableString.optional(),
  runner_group_id: nullableId.optional(),
  runner_group_name: nullableString.optional(),
  html_url: z.string(),
  created_at: nullableString.optional(),
  started_at: nullableString.optional(),
  completed_at: nullableString.optional(),
});

const workflowRunSchema = z.object({
  id,
  run_attempt: z.number().int().positive().default(1),
  name: nullableString.optional(),
  status: z.string(),
  conclusion: nullableString,
  event: nullableString.optional(),
  html_url: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  run_started_at: nullableString.optional(),
});

const workflowJobEventSchema = z.object({
  action: z.string(),
  workflow_job: workflowJobSchema,
  repository: repositorySchema,
  installation: installationSchema,
});

const workflowRunEventSchema = z.object({
  action: z.string(),
  workflow_run: workflowRunSchema,
  repository: repositorySchema,
  installation: installationSchema,
});

const JOB_ACTIONS: Record<string, JobObservationKind> = {
  queued: 'job.queued',
  waiting: 'job.waiting',
  in_progress: 'job.started',
  completed: 'job.completed',
};

export interface DeliveryContext {
  event: string;
  deliveryId: string;
  receivedAt: string;
}

/**
 * Turns a verified, parsed GitHub delivery into an observation. Branches on `action`, never on
 * `workflow_job.status` (a `queued` delivery may carry status `waiting`).
 */
export function normalizeWebhook(context: DeliveryContext, payload: unknown): NormalizeResult {
  if (context.event === 'ping') return { kind: 'ignored', reason: 'ping' };
  if (context.event !== 'workflow_job' && context.event !== 'workflow_run') {
    return { kind: 'ignored', reason: `event ${context.event} is not handled` };
  }
  const action = actionOf(payload);
  if (action === undefined) return { kind: 'invalid', missing: ['action'] };

  if (context.event === 'workflow_job') {
    const kind = JOB_ACTIONS[action];
    if (!kind) return { kind: 'ignored', reason: `workflow_job action ${action} is not handled` };
    const parsed = workflowJobEventSchema.safeParse(payload);
    if (!parsed.success) return { kind: 'invalid', missing: issuePaths(parsed.error) };
    const { workflow_job: job, repository, installation } = parsed.data;
    return {
      kind: 'observation',
      observation: {
        kind,
        ...base(context, repository, installation),
        job: {
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
          htmlUrl: job.html_url,
          createdAt: job.created_at ?? job.started_at ?? null,
          startedAt: job.started_at ?? null,
          completedAt: job.completed_at ?? null,
        },
      },
    };
  }

  if (action !== 'completed') {
    return { kind: 'ignored', reason: `workflow_run action ${action} is not handled` };
  }
  const parsed = workflowRunEventSchema.safeParse(payload);
  if (!parsed.success) return { kind: 'invalid', missing: issuePaths(parsed.error) };
  const { workflow_run: run, repository, installation } = parsed.data;
  return {
    kind: 'observation',
    observation: {
      kind: 'run.completed',
      ...base(context, repository, installation),
      run: {
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
      },
    },
  };
}

function actionOf(payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null || !('action' in payload)) return undefined;
  return typeof payload.action === 'string' ? payload.action : undefined;
}

function base(
  context: DeliveryContext,
  repository: z.infer<typeof repositorySchema>,
  installation: z.infer<typeof installationSchema>,
) {
  const repo: RepositoryRef = {
    id: repository.id,
    fullName: repository.full_name,
    owner: repository.owner.login,
    name: repository.name,
  };
  return {
    deliveryId: context.deliveryId,
    installationId: installation?.id ?? null,
    repository: repo,
    receivedAt: context.receivedAt,
  };
}

function issuePaths(error: z.ZodError): string[] {
  const paths = error.issues.map((issue) => issue.path.map(String).join('.') || '(root)');
  return [...new Set(paths)].sort();
}
