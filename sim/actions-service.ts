/**
 * The port between the cluster twin (sim/kube) and the GitHub twin (sim/github): what ARC's
 * listener and a runner process see of the Actions service. sim/kube ships an in-memory
 * implementation for its own tests; sim/github implements it for real scenarios.
 */

/** A job handed to a runner, with the fields ARC's listener copies into EphemeralRunner status. */
export interface JobAssignment {
  /** REST `workflow_job.id` (int64; exceeds 2^31). */
  jobId: number;
  /** The Actions service's job GUID (ER `status.jobId` in ARC >= 0.13). */
  jobGuid: string;
  runnerRequestId: number;
  runId: number;
  runAttempt: number;
  /** `owner/repo` */
  repository: string;
  workflowRef: string;
  displayName: string;
}

/**
 * How a runner process stopped, as sim/kube reports it. For a busy runner this is the line
 * between a graceful and a hard loss of its job:
 * - graceful (`sigterm`): the runner itself told the service it is shutting down (its own SIGTERM
 *   handling, or graceful-stop.sh giving up at RUNNER_GRACEFUL_STOP_TIMEOUT); GitHub concludes
 *   the job within seconds (measured 15–26 s);
 * - hard (`killed`): the process vanished without a word (SIGKILL at the end of the grace
 *   period, OOM, kubelet eviction, the node gone, the network lost); the job stays
 *   `in_progress` until GitHub's lost-runner lock lapses (~576 s after the last renewal).
 */
export type RunnerStopKind =
  /** The runner process exited after its job finished (exit 0), or exited idle. */
  | 'completed'
  /** A graceful stop: a busy runner fails its job with "The runner has received a shutdown signal". */
  | 'sigterm'
  /** A hard stop: no word to the service; the job's lock lapses later. */
  | 'killed';

export interface ScaleSetRegistration {
  /** Organisation (or `owner/repo` for a repository-level scale set) from githubConfigUrl. */
  owner: string;
  /** `runnerScaleSetName`, which is also the `runs-on` label jobs use. */
  name: string;
}

export interface ActionsService {
  /** Creates (or finds) the scale set on the service; returns its id (`runnerScaleSetId`). */
  registerScaleSet(scaleSet: ScaleSetRegistration): number;

  /** The listener's statistic `TotalAssignedJobs` for a scale set: queued-for-it plus running. */
  assignedJobCount(scaleSetId: number): number;

  /** JIT config: registers an offline runner under `runnerName`; returns the GitHub runner id. */
  registerRunner(scaleSetId: number, runnerName: string): number;

  /**
   * A runner process came online and asks for work. Returns the job it starts, or undefined
   * when none is waiting. A runner whose registration was removed gets undefined for ever.
   */
  acquireJob(runnerName: string): JobAssignment | undefined;

  /** The runner process stopped (see RunnerStopKind). Idempotent. */
  runnerStopped(runnerName: string, kind: RunnerStopKind): void;

  /** `RemoveRunner`: 'busy' while the service thinks the runner still runs a job. */
  removeRunner(runnerId: number): 'removed' | 'busy' | 'not-found';

  /**
   * Whether the runner's registration still exists (ARC 0.9's check after a runner exits 0:
   * still registered means the runner never took a job, and its pod is restarted). Optional:
   * without it, a runner that exited 0 counts as gone.
   */
  runnerRegistered?(runnerId: number): boolean;

  /**
   * The runner process reports its version as it opens its message session (before it asks for
   * work). Returns GitHub's refusal text when that version may no longer receive jobs (the runner
   * then logs it and exits 0, its pod cycling), or undefined. Optional: twins without runner
   * version enforcement leave it out.
   */
  runnerVersionRefusal?(runnerName: string, version: string): string | undefined;

  /**
   * Called when the service finishes the job a runner holds (success, failure or cancel), so the
   * runner process exits with code 0. Returns an unsubscribe function.
   */
  onJobFinished(listener: (runnerName: string, job: JobAssignment) => void): () => void;
}
