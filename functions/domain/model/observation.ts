import * as z from 'zod';

/**
 * Observations are facts runner-medic has seen, in its own words. The webhook ingress turns GitHub
 * deliveries into these; the remediate function reads them back off the bus. The schemas below
 * are their one definition: the types come from them, and the remediate input parses with them.
 * Ids are plain numbers: GitHub ids exceed 2^31 but stay far below 2^53.
 */

export const OBSERVATION_SOURCE = 'runner-medic';

/** A GitHub id (job, run, runner, installation, repository): exact below 2^53. */
export const githubId = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/**
 * GitHub's delivery ids (`X-GitHub-Delivery`) are UUIDs, 36 characters; anything much longer is
 * refused before it reaches a store key (DynamoDB keys stop at 2,048 bytes).
 */
export const MAX_DELIVERY_ID_LENGTH = 128;

/**
 * Every field is bounded: GitHub's own limits (a login is at most 39 characters, a repository
 * name 100, ids stay below 2^53, a run has far fewer than 1,000 attempts) with headroom. Anything
 * outside is rejected with a reason when read, never thrown later by the store or a key builder.
 */
const MAX_TEXT = 1024;
const MAX_URL = 2048;
const MAX_ATTEMPT = 1000;
const text = (max: number) => z.string().max(max);
const nullableText = text(MAX_TEXT).nullable();
const time = text(64);
const status = text(64);
const attempt = z.number().int().positive().max(MAX_ATTEMPT);

const repositoryRefSchema = () =>
  z.object({
    id: githubId,
    /** `owner/name` */
    fullName: z.string().min(3).max(140),
    owner: z.string().min(1).max(39),
    name: z.string().min(1).max(100),
  });

const jobFactsSchema = () =>
  z.object({
    jobId: githubId,
    runId: githubId,
    runAttempt: attempt,
    name: text(MAX_TEXT),
    workflowName: nullableText,
    headBranch: nullableText,
    /** `runs-on` labels; for an ARC scale set, its name. */
    labels: z.array(text(256)).max(100),
    status,
    conclusion: status.nullable(),
    runnerId: githubId.nullable(),
    runnerName: nullableText,
    runnerGroupId: githubId.nullable(),
    runnerGroupName: nullableText,
    htmlUrl: text(MAX_URL),
    /** Absent only in very old payloads; then `startedAt` stands in. */
    createdAt: time.nullable(),
    startedAt: time.nullable(),
    completedAt: time.nullable(),
  });

const runFactsSchema = () =>
  z.object({
    runId: githubId,
    runAttempt: attempt,
    name: nullableText,
    status,
    conclusion: status.nullable(),
    event: status.nullable(),
    htmlUrl: text(MAX_URL),
    createdAt: time,
    updatedAt: time,
    runStartedAt: time.nullable(),
  });

const observationBase = () => ({
  /** `X-GitHub-Delivery`. */
  deliveryId: z.string().min(1).max(MAX_DELIVERY_ID_LENGTH),
  installationId: githubId.nullable(),
  repository: repositoryRefSchema(),
  /** When runner-medic received it (ISO 8601). */
  receivedAt: time,
});

/**
 * An observation as it travels on the bus (EventBridge `detail`), bounded in every field. Built
 * on its first parse (z.lazy): only remediate reads observations, and only for GitHub's inputs;
 * the webhook imports this module for the ids and types and would build its ~70 schemas for nothing.
 */
export const githubObservationSchema = z.lazy(() => {
  const base = observationBase();
  const job = jobFactsSchema();
  const jobObservation = <K extends string>(kind: K) =>
    z.object({ kind: z.literal(kind), ...base, job });
  return z.discriminatedUnion('kind', [
    jobObservation('job.queued'),
    jobObservation('job.waiting'),
    jobObservation('job.started'),
    jobObservation('job.completed'),
    z.object({ kind: z.literal('run.completed'), ...base, run: runFactsSchema() }),
  ]);
});

export type RepositoryRef = z.infer<ReturnType<typeof repositoryRefSchema>>;
export type JobFacts = z.infer<ReturnType<typeof jobFactsSchema>>;
export type RunFacts = z.infer<ReturnType<typeof runFactsSchema>>;
export type GithubObservation = z.infer<typeof githubObservationSchema>;
export type ObservationKind = GithubObservation['kind'];
type JobObservation = Exclude<GithubObservation, { kind: 'run.completed' }>;
export type JobObservationKind = JobObservation['kind'];

/** EventBridge `detail-type` for each observation kind. */
export const DETAIL_TYPES: Record<ObservationKind, string> = {
  'job.queued': 'GitHub Job Queued',
  'job.waiting': 'GitHub Job Waiting',
  'job.started': 'GitHub Job Started',
  'job.completed': 'GitHub Job Completed',
  'run.completed': 'GitHub Run Completed',
};
