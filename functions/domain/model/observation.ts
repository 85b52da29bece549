/**
 * Observations are facts runner-medic has seen, in its own words. The webhook ingress turns GitHub
 * deliveries into these; the remediate function reads them back off the bus.
 * Ids are plain numbers: GitHub ids exceed 2^31 but stay far below 2^53.
 */

export const OBSERVATION_SOURCE = 'runner-medic';

export type JobObservationKind = 'job.queued' | 'job.waiting' | 'job.started' | 'job.completed';
export type ObservationKind = JobObservationKind | 'run.completed';

/** EventBridge `detail-type` for each observation kind. */
export const DETAIL_TYPES: Record<ObservationKind, string> = {
  'job.queued': 'GitHub Job Queued',
  'job.waiting': 'GitHub Job Waiting',
  'job.started': 'GitHub Job Started',
  'job.completed': 'GitHub Job Completed',
  'run.completed': 'GitHub Run Completed',
};

export interface RepositoryRef {
  id: number;
  /** `owner/name` */
  fullName: string;
  owner: string;
  name: string;
}

export interface JobFacts {
  jobId: number;
  runId: number;
  runAttempt: number;
  name: string;
  workflowName: string | null;
  headBranch: string | null;
  /** `runs-on` labels; for an ARC scale set, its name. */
  labels: string[];
  status: string;
  conclusion: string | null;
  runnerId: number | null;
  runnerName: string | null;
  runnerGroupId: number | null;
  runnerGroupName: string | null;
  htmlUrl: string;
  /** Absent only in very old payloads; then `startedAt` stands in. */
  createdAt: string | null;
  startedAt: string | null;
  completedAt: string | null;
}

export interface RunFacts {
  runId: number;
  runAttempt: number;
  name: string | null;
  status: string;
  conclusion: string | null;
  event: string | null;
  htmlUrl: string;
  createdAt: string;
  updatedAt: string;
  runStartedAt: string | null;
}

interface ObservationBase {
  /** `X-GitHub-Delivery`. */
  deliveryId: string;
  installationId: number | null;
  repository: RepositoryRef;
  /** When runner-medic received it (ISO 8601). */
  receivedAt: string;
}

export interface JobObservation extends ObservationBase {
  kind: JobObservationKind;
  job: JobFacts;
}

export interface RunObservation extends ObservationBase {
  kind: 'run.completed';
  run: RunFacts;
}

export type GithubObservation = JobObservation | RunObservation;
