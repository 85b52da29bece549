import * as z from 'zod';
import {
  githubId,
  githubJobSchema,
  githubRunSchema,
  toJobFacts,
  toRunFacts,
} from '../domain/model/github-objects.js';
import { DETAIL_TYPES, OBSERVATION_SOURCE } from '../domain/model/observation.js';
import { problemPaths } from '../domain/model/zod-problems.js';
import type { BusEvent } from '../ports/event-publisher.js';
import type {
  GithubObservation,
  JobObservationKind,
  RepositoryRef,
} from '../domain/model/observation.js';

const repositorySchema = z.object({
  id: githubId,
  full_name: z.string().min(3),
  name: z.string().min(1),
  owner: z.object({ login: z.string().min(1) }),
});

const installationSchema = z.object({ id: githubId }).nullish();

const workflowJobEventSchema = z.object({
  action: z.string(),
  workflow_job: githubJobSchema,
  repository: repositorySchema,
  installation: installationSchema,
});

const workflowRunEventSchema = z.object({
  action: z.string(),
  workflow_run: githubRunSchema,
  repository: repositorySchema,
  installation: installationSchema,
});

const JOB_ACTIONS: Record<string, JobObservationKind> = {
  queued: 'job.queued',
  waiting: 'job.waiting',
  in_progress: 'job.started',
  completed: 'job.completed',
};

/** An observation; or a delivery runner-medic does not act on; or one missing what it needs. */
export type NormalizeResult =
  | { kind: 'observation'; observation: GithubObservation }
  | { kind: 'ignored'; reason: string }
  | { kind: 'invalid'; missing: string[] };

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
    if (!parsed.success) return { kind: 'invalid', missing: problemPaths(parsed.error) };
    const { workflow_job: job, ...delivery } = parsed.data;
    return observed({ kind, ...base(context, delivery), job: toJobFacts(job) });
  }

  if (action !== 'completed') {
    return { kind: 'ignored', reason: `workflow_run action ${action} is not handled` };
  }
  const parsed = workflowRunEventSchema.safeParse(payload);
  if (!parsed.success) return { kind: 'invalid', missing: problemPaths(parsed.error) };
  const { workflow_run: run, ...delivery } = parsed.data;
  if (run.conclusion !== null && ENDINGS_WITH_NOTHING_TO_RESCUE.has(run.conclusion))
    return { kind: 'ignored', reason: `a run that ended ${run.conclusion} needs nothing` };
  return observed({ kind: 'run.completed', ...base(context, delivery), run: toRunFacts(run) });
}

/**
 * A run that ended so has no job to re-run (a lost job fails its run), and its attempt is known
 * from its jobs' own webhooks: the delivery is neither stored nor published. Most runs end so;
 * they were a quarter of a healthy org's stored deliveries.
 */
const ENDINGS_WITH_NOTHING_TO_RESCUE = new Set(['success', 'skipped', 'neutral']);

const observed = (observation: GithubObservation): NormalizeResult => ({
  kind: 'observation',
  observation,
});

function actionOf(payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null || !('action' in payload)) return undefined;
  return typeof payload.action === 'string' ? payload.action : undefined;
}

function base(
  context: DeliveryContext,
  {
    repository,
    installation,
  }: {
    repository: z.infer<typeof repositorySchema>;
    installation?: z.infer<typeof installationSchema>;
  },
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

/** The bus event that carries an observation: one shape for the webhook and the sweep. */
export function observationEvent(observation: GithubObservation): BusEvent {
  return {
    source: OBSERVATION_SOURCE,
    detailType: DETAIL_TYPES[observation.kind],
    detail: observation,
  };
}
