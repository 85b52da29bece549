import * as z from 'zod';
import { githubId as id, githubJobSchema } from '../../domain/model/github-objects.js';
import type { RunnerRegistration } from '../../domain/model/facts.js';
import { problemPaths } from '../../domain/model/zod-problems.js';
import type { RunnerOwner, WebhookDeliveryAttempt } from '../../ports/github-gateway.js';
import { GithubResponseError } from './github-errors.js';

const text = z.string().nullable();

export const jobsPageSchema = z.object({
  total_count: z.number().int().nonnegative(),
  jobs: z.array(githubJobSchema),
});

/** A check run's annotations, read as the domain's JobAnnotation (GitHub's own field names). */
export const annotationsPageSchema = z.array(
  z.object({
    annotation_level: z.string(),
    message: z.string(),
    path: text.default(null),
    title: text.default(null),
  }),
);

export const runnerSchema = z.object({
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

/** `GET /actions/runners/deprecations/{version}` (changelog 2026-09-03): the two dates it names. */
export const deprecationSchema = z.object({
  runtime_deprecates_at: z.string().nullable().optional(),
  registration_deprecates_at: z.string().nullable().optional(),
});

/** Parses a 2xx body, or throws GithubResponseError naming every bad path. */
export function parseBody<T extends z.ZodType>(
  schema: T,
  body: unknown,
  what: string,
): z.output<T> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  throw new GithubResponseError(
    `${what}: unexpected response at ${problemPaths(parsed.error).join(', ')}`,
    { cause: parsed.error },
  );
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

export const deliveriesPageSchema = z.array(
  z.object({
    id,
    guid: z.string().min(1),
    delivered_at: z.string(),
    redelivery: z.boolean(),
    status_code: z.number().int(),
    event: z.string(),
  }),
);

export function toDeliveryAttempt(
  d: z.output<typeof deliveriesPageSchema>[number],
): WebhookDeliveryAttempt {
  return {
    id: d.id,
    guid: d.guid,
    deliveredAt: Date.parse(d.delivered_at),
    statusCode: d.status_code,
    event: d.event,
    redelivery: d.redelivery,
  };
}
