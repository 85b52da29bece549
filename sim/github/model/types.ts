import type { JobAssignment, RunnerStopKind } from '../../actions-service.js';

type JobStatus = 'queued' | 'in_progress' | 'completed' | 'waiting';
export type JobConclusion = 'success' | 'failure' | 'cancelled' | 'skipped';
type RunStatus = 'queued' | 'in_progress' | 'completed';

/** One job of a workflow definition, as a scenario describes it. */
export interface JobSpec {
  /** The job's name (also its key in `needs`). */
  name: string;
  /** `runs-on` labels; for an ARC scale set, its name. */
  runsOn: string | string[];
  needs?: string[];
  /** `strategy.matrix`: each combination becomes a job named `name (v1, v2)`. */
  matrix?: Record<string, (string | number)[]>;
  /** `strategy.fail-fast` (GitHub's default: true). */
  failFast?: boolean;
  /** How long the job runs once a runner picks it up. Default 60 s. */
  durationMs?: number;
  /** A genuine failure: the job fails on its own after `afterMs` (default: its duration). */
  fails?: {
    afterMs?: number;
    /** Name of the failing step. */
    step?: string;
    /** Only this matrix combination fails (default: all of them). */
    matrix?: Record<string, string | number>;
    /** Only these attempts fail (default: every attempt). */
    attempts?: number[];
  };
  /** An environment with a protection rule: the job waits (`waiting`) for `approveAfterMs`. */
  environment?: { name: string; approveAfterMs: number };
}

export interface WorkflowSpec {
  name: string;
  /** Default `.github/workflows/<name>.yml`. */
  path?: string;
  jobs: JobSpec[];
}

export interface Account {
  login: string;
  id: number;
  nodeId: string;
  type: 'Organization' | 'User' | 'Bot';
}

export interface Repo {
  id: number;
  nodeId: string;
  owner: Account;
  name: string;
  fullName: string;
  createdAt: number;
  defaultBranch: string;
}

export interface Installation {
  id: number;
  account: Account;
  /**
   * When the account (or the App's owner) suspended it: GitHub then refuses its tokens, new and
   * issued, with 403 "This installation has been suspended" (docs.github.com, "Suspending a GitHub
   * App installation"; the message octokit.rb raises InstallationSuspended on).
   */
  suspendedAt?: number;
}

export interface Workflow {
  id: number;
  nodeId: string;
  repo: Repo;
  spec: WorkflowSpec;
  path: string;
  createdAt: number;
}

interface Step {
  name: string;
  number: number;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: JobConclusion | null;
  startedAt: number | null;
  completedAt: number | null;
}

export interface Annotation {
  path: string;
  startLine: number;
  endLine: number;
  level: 'failure' | 'warning' | 'notice';
  title: string;
  message: string;
  rawDetails: string;
}

/** One execution of a job: every attempt that runs a job creates a new one, with a new id. */
export interface Job {
  id: number;
  guid: string;
  nodeId: string;
  runId: number;
  runAttempt: number;
  /** Display name, unique within the run: `build (linux, 20)`. */
  name: string;
  spec: JobSpec;
  /** This job's matrix combination, if it is a matrix job. */
  matrix: Record<string, string | number> | null;
  labels: string[];
  status: JobStatus;
  conclusion: JobConclusion | null;
  createdAt: number;
  startedAt: number;
  completedAt: number | null;
  runnerId: number | null;
  runnerName: string | null;
  runnerGroupId: number | null;
  runnerGroupName: string | null;
  steps: Step[];
  annotations: Annotation[];
  runnerRequestId: number;
  /** Set once a cancel was asked while the job ran on a runner that cannot answer. */
  cancelRequested: boolean;
  /** Time of the runner's last lock renewal (every 60 s while it lives). */
  lockRenewedAt: number | null;
  /** When the job's own (genuine) failure is due, if the spec fails it. */
  failsOnItsOwn: boolean;
}

export interface Run {
  id: number;
  nodeId: string;
  workflow: Workflow;
  repo: Repo;
  runNumber: number;
  attempt: number;
  event: string;
  headSha: string;
  headBranch: string;
  actor: Account;
  triggeringActor: Account;
  checkSuiteId: number;
  checkSuiteNodeId: string;
  createdAt: number;
  updatedAt: number;
  runStartedAt: number;
  status: RunStatus;
  conclusion: JobConclusion | null;
  /** Every job execution of every attempt, in creation order. */
  jobs: Job[];
  /** Job names of the current attempt that still wait for their `needs`. */
  pending: string[];
  /** Set by cancel: the run ends `cancelled` once its jobs have stopped. */
  cancelling: boolean;
  /** When the current attempt completed (null while it runs). */
  completedAt: number | null;
}

export interface ScaleSet {
  id: number;
  /** Organisation login, or `owner/repo` for a repository-level scale set. */
  owner: string;
  name: string;
  runnerGroupId: number;
  runnerGroupName: string;
}

export interface Runner {
  id: number;
  name: string;
  scaleSet: ScaleSet;
  status: 'online' | 'offline';
  /** False once the registration was deleted (by ARC, the REST API, or GitHub itself). */
  registered: boolean;
  /** The job this (ephemeral) runner took, if any. */
  jobId: number | null;
  assignment: JobAssignment | null;
  stopped: RunnerStopKind | null;
  /** Sim time the runner process stopped, if it has. */
  stoppedAt: number | null;
  registeredAt: number;
  /** The runner's version, once it reported it (ActionsService `runnerVersionRefusal`). */
  version: string | null;
}

/** Who made a change: `runner-medic` (App token), `user` (a user token), or the models themselves. */
export type Actor = 'runner-medic' | 'user' | 'github' | 'arc';

export interface AuditEntry {
  /** Simulated ms since the epoch. */
  at: number;
  by: Actor;
  api: 'github';
  verb: string;
  target: string;
  status: number;
  /** The run's attempt the call acted on, for a call on a run or one of its jobs. */
  runAttempt?: number;
}
