import type { JobAnnotation } from '../domain/classify/annotations.js';
import type { JobFacts, RepositoryRef, RunFacts } from '../domain/model/observation.js';
import type { RunnerRegistration } from '../domain/model/facts.js';
import { RunnerMedicError } from './errors.js';

/** A GitHub call failed in a way worth retrying later (network, 5xx, rate limit past our time). */
export class GithubUnavailableError extends RunnerMedicError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('unavailable', message, options);
    this.name = 'GithubUnavailableError';
  }
}

/**
 * How GitHub answered a mutating call:
 * - `done`: 201/202/204 (or, after an ambiguous answer, the run shows the effect);
 * - `already-running`: 403 "This workflow is already running" (retry when the run completes);
 * - `refused`: another 403 ("over a month ago", "cannot be retried"): final;
 * - `conflict`: 409 (cancel of a completed run);
 * - `busy`: 422 runner "still running a job" (retry later);
 * - `not-found`: 404;
 * - `moved-on`: the run is no longer on the attempt the action was decided for, or (cancels) a job
 *   the cancel was for is no longer in progress, or another job is: nothing was sent;
 * - `try-again`: a cancel GitHub refused for now (500 "Failed to cancel workflow run",
 *   actions/runner#3329; 409 "Cannot cancel a workflow re-run that has not yet queued.",
 *   actions/runner#3872) while the run is still in progress: sending it again is safe; or a
 *   `rerun-failed-jobs` not sent because the run holds a failed job runner-medic did not judge
 *   killed: decide again once that job is known;
 * - `unknown`: the call timed out or got a 5xx, and reading the run could not tell whether it
 *   took effect. Never repeated blindly: the next try reads the run's attempt first.
 */
export type GithubMutation =
  | { result: 'done' }
  | {
      result:
        | 'already-running'
        | 'refused'
        | 'conflict'
        | 'busy'
        | 'not-found'
        | 'moved-on'
        | 'try-again'
        | 'unknown';
      message: string;
    };

/** The run and attempt a re-run or cancel was decided for: GitHub is asked only while it holds. */
export interface AttemptPrecondition {
  runId: number;
  runAttempt: number;
  /**
   * Cancels only: send nothing unless these jobs are still in progress and, unless
   * `allowLiveJobs`, no other job of the attempt is (cancelling a run cancels all its jobs).
   */
  jobs?: { inProgress: number[]; allowLiveJobs: boolean };
  /**
   * `rerun-failed-jobs` only: the jobs found killed (or cancelled with them). It retries every
   * failed job of the run, so it is sent only when the run's latest executions hold no other.
   */
  killedJobs?: number[];
}

/** When GitHub stops a runner version (`GET /actions/runners/deprecations/{version}`). */
export interface RunnerVersionDeprecation {
  version: string;
  /** From then on, runners of this version get no jobs (epoch ms); null when not scheduled. */
  runtimeDeprecatesAt: number | null;
  /** From then on, runners of this version may not register (epoch ms); null when not scheduled. */
  registrationDeprecatesAt: number | null;
}

export interface RepoRef {
  /** `owner/repo` */
  repo: string;
  installationId: number | null;
}

/** Where a runner is registered. */
export type RunnerOwner = { org: string } | { repo: string };

/** One attempt GitHub made to deliver a webhook to the App (`GET /app/hook/deliveries`). */
export interface WebhookDeliveryAttempt {
  id: number;
  /** `X-GitHub-Delivery`: the same for every attempt of one delivery. */
  guid: string;
  /** Epoch ms. */
  deliveredAt: number;
  /** 2xx: runner-medic took it; 0: never reached us. */
  statusCode: number;
  event: string;
  redelivery: boolean;
}

/** runner-medic's view of GitHub, per App installation. */
export interface GithubGateway {
  /**
   * Re-runs and cancels read the run first and send nothing unless it is still on
   * `expected.runAttempt` (`moved-on` otherwise); their POST is never retried by the client.
   */
  rerunJob(ref: RepoRef, jobId: number, expected: AttemptPrecondition): Promise<GithubMutation>;
  rerunFailedJobs(ref: RepoRef, expected: AttemptPrecondition): Promise<GithubMutation>;
  cancelRun(ref: RepoRef, expected: AttemptPrecondition): Promise<GithubMutation>;
  forceCancelRun(ref: RepoRef, expected: AttemptPrecondition): Promise<GithubMutation>;
  getJob(ref: RepoRef, jobId: number): Promise<JobFacts | null>;
  getRun(ref: RepoRef, runId: number): Promise<RunFacts | null>;
  /** Every job of the run's latest attempt (`filter=latest`), all pages. */
  listJobs(ref: RepoRef, runId: number): Promise<JobFacts[]>;
  /** Failure-level and other annotations of a job's check run (id == job id), all pages. */
  listAnnotations(ref: RepoRef, jobId: number): Promise<JobAnnotation[]>;
  /** Self-hosted runners of an org or repo, all pages. `offlineSince` is left null. */
  listRunners(owner: RunnerOwner, installationId: number | null): Promise<RunnerRegistration[]>;
  deleteRunner(
    owner: RunnerOwner,
    installationId: number | null,
    runnerId: number,
  ): Promise<GithubMutation>;
  /**
   * One page (1-based, 100 a page) of an org's or repo's self-hosted runners; `last` when no
   * page follows. The sweep's orphan scan walks them a few pages a sweep.
   */
  listRunnersPage(
    owner: RunnerOwner,
    installationId: number,
    page: number,
  ): Promise<{ registrations: RunnerRegistration[]; last: boolean }>;
  /** One registration by runner id (`GET …/actions/runners/{id}`); null when it is gone (404). */
  getRunnerRegistration(
    owner: RunnerOwner,
    installationId: number,
    runnerId: number,
  ): Promise<RunnerRegistration | null>;
  /**
   * The App's delivery attempts since `since` (epoch ms), newest first (App JWT): all pages, or,
   * given `afterId`, only those newer than that attempt (the pages stop where it is reached).
   */
  listDeliveryAttempts(since: number, afterId?: number): Promise<WebhookDeliveryAttempt[]>;
  /**
   * Runs `read` (the sweep's own look at GitHub) as an observe call of the installation, if its
   * share of the installation's hourly rate limit allows one more; null when it does not. Act
   * calls (re-runs, cancels, deletes, check runs) never go through it and never wait for it.
   */
  observe<T>(installationId: number, read: () => Promise<T>): Promise<T | null>;
  /** Percent of the installation's hourly rate limit used (by anyone), null when not known. */
  budgetUsed(installationId: number): number | null;
  /** Asks GitHub to deliver an attempt again, with the same `X-GitHub-Delivery` (App JWT). */
  redeliver(attemptId: number): Promise<GithubMutation>;
  /**
   * One page (1-based, 100 a page) of the repositories an installation can see
   * (`GET /installation/repositories`); `last` when no page follows.
   */
  listInstallationRepositories(
    installationId: number,
    page: number,
  ): Promise<{ repositories: RepositoryRef[]; last: boolean }>;
  /**
   * Runs of a repository still queued, created since `since` (epoch ms), newest first: one page
   * of at most `limit`, so the sweep's GitHub-side check stays bounded in calls.
   */
  listQueuedRuns(ref: RepoRef, since: number, limit: number): Promise<RunFacts[]>;
  /**
   * When a runner version stops working (`GET /actions/runners/deprecations/{version}`, GitHub
   * changelog 2026-09-03), asked with the App's installation in `owner`; null when GitHub does
   * not know the version (404).
   */
  runnerVersionDeprecation(
    version: string,
    owner: RunnerOwner,
    installationId: number | null,
  ): Promise<RunnerVersionDeprecation | null>;
}
