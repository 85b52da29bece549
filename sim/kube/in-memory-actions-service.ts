/**
 * An in-memory Actions service for sim/kube's own tests (sim/github's twin implements the same
 * port for real scenarios). Jobs are queued per scale set, taken by runners that poll, finished
 * by the test (or after a set duration), and failed when their runner stops under them:
 * at once on SIGTERM, after the lost-communication window when killed.
 */
import type { SimClock, TimerHandle } from '../clock.js';
import type {
  ActionsService,
  JobAssignment,
  RunnerStopKind,
  ScaleSetRegistration,
} from '../actions-service.js';

export type JobConclusion = 'success' | 'failure' | 'cancelled';

export interface SimJob extends JobAssignment {
  scaleSetId: number;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion?: JobConclusion;
  runnerName?: string;
  /** Why a job failed with its runner (the annotation GitHub shows). */
  failureMessage?: string;
  /** When set, the job succeeds this long after a runner starts it. */
  durationMs?: number;
}

export interface SimRunner {
  id: number;
  name: string;
  scaleSetId: number;
  status: 'offline' | 'online' | 'busy';
  removed: boolean;
  /** Ephemeral: a runner takes at most one job. */
  used: boolean;
  job?: SimJob;
  stopped?: RunnerStopKind;
}

export const SHUTDOWN_SIGNAL_MESSAGE =
  'The runner has received a shutdown signal. This can happen when the runner service is stopped, or a manually started runner is canceled.';
const lostCommunicationMessage = (runner: string) =>
  `The self-hosted runner: ${runner} lost communication with the server. Verify the machine is running and has a healthy network connection. Anything in your workflow that terminates the runner process, starves it for CPU/Memory, or blocks its network access can cause this error.`;

export interface InMemoryActionsServiceOptions {
  /** How long the service waits for a killed runner before failing its job (default 10 min). */
  lostCommunicationMs?: number;
  /**
   * A graceful loss: how long after a busy runner reports SIGTERM the job is concluded (default 0,
   * at once; GitHub measured 15–26 s, see sim/github for the faithful figure).
   */
  gracefulConclusionMs?: number;
}

export class InMemoryActionsService implements ActionsService {
  readonly scaleSets = new Map<number, ScaleSetRegistration>();
  readonly runners = new Map<string, SimRunner>();
  readonly jobs: SimJob[] = [];
  private readonly listeners = new Set<(runnerName: string, job: JobAssignment) => void>();
  private readonly timers = new Map<number, TimerHandle>();
  private nextScaleSetId = 1;
  private nextRunnerId = 1001;
  private nextJob = 1;
  private readonly lostCommunicationMs: number;
  private readonly gracefulConclusionMs: number;

  constructor(
    private readonly clock: SimClock,
    options: InMemoryActionsServiceOptions = {},
  ) {
    this.lostCommunicationMs = options.lostCommunicationMs ?? 10 * 60_000;
    this.gracefulConclusionMs = options.gracefulConclusionMs ?? 0;
  }

  registerScaleSet(scaleSet: ScaleSetRegistration): number {
    for (const [id, s] of this.scaleSets)
      if (s.owner === scaleSet.owner && s.name === scaleSet.name) return id;
    const id = this.nextScaleSetId++;
    this.scaleSets.set(id, { ...scaleSet });
    return id;
  }

  scaleSetIdByName(name: string): number {
    for (const [id, s] of this.scaleSets) if (s.name === name) return id;
    throw new Error(`no scale set named ${name}`);
  }

  /** Queues a job for a scale set (by name or id). */
  queueJob(
    scaleSet: string | number,
    options: Partial<JobAssignment> & { durationMs?: number } = {},
  ): SimJob {
    const scaleSetId = typeof scaleSet === 'number' ? scaleSet : this.scaleSetIdByName(scaleSet);
    const n = this.nextJob++;
    const job: SimJob = {
      jobId: 30_000_000_000 + n,
      jobGuid: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
      runnerRequestId: 5_000 + n,
      runId: 20_000_000_000 + n,
      runAttempt: 1,
      repository: 'acme/app',
      workflowRef: 'acme/app/.github/workflows/ci.yml@refs/heads/main',
      displayName: `build (${n})`,
      ...options,
      scaleSetId,
      status: 'queued',
    };
    this.jobs.push(job);
    return job;
  }

  assignedJobCount(scaleSetId: number): number {
    return this.jobs.filter((j) => j.scaleSetId === scaleSetId && j.status !== 'completed').length;
  }

  registerRunner(scaleSetId: number, runnerName: string): number {
    const existing = this.runners.get(runnerName);
    if (existing && !existing.removed) return existing.id;
    const id = this.nextRunnerId++;
    this.runners.set(runnerName, {
      id,
      name: runnerName,
      scaleSetId,
      status: 'offline',
      removed: false,
      used: false,
    });
    return id;
  }

  acquireJob(runnerName: string): JobAssignment | undefined {
    const runner = this.runners.get(runnerName);
    if (!runner || runner.removed) return undefined;
    if (runner.status === 'offline') runner.status = 'online';
    if (runner.used) return undefined;
    const job = this.jobs.find((j) => j.scaleSetId === runner.scaleSetId && j.status === 'queued');
    if (!job) return undefined;
    job.status = 'in_progress';
    job.runnerName = runnerName;
    runner.used = true;
    runner.status = 'busy';
    runner.job = job;
    if (job.durationMs !== undefined) {
      this.timers.set(
        job.jobId,
        this.clock.after(job.durationMs, `job ${job.jobId} completes`, () =>
          this.finishJob(job.jobId, 'success'),
        ),
      );
    }
    return assignment(job);
  }

  runnerStopped(runnerName: string, kind: RunnerStopKind): void {
    const runner = this.runners.get(runnerName);
    if (!runner || runner.stopped) return;
    runner.stopped = kind;
    runner.status = 'offline';
    const job = runner.job;
    if (!job || job.status !== 'in_progress') return;
    if (kind === 'sigterm') {
      this.clock.cancel(this.timers.get(job.jobId));
      if (this.gracefulConclusionMs <= 0)
        this.finishJob(job.jobId, 'failure', SHUTDOWN_SIGNAL_MESSAGE);
      else
        this.timers.set(
          job.jobId,
          this.clock.after(this.gracefulConclusionMs, `job ${job.jobId} concluded`, () =>
            this.finishJob(job.jobId, 'failure', SHUTDOWN_SIGNAL_MESSAGE),
          ),
        );
    } else if (kind === 'killed') {
      this.clock.cancel(this.timers.get(job.jobId));
      this.timers.set(
        job.jobId,
        this.clock.after(this.lostCommunicationMs, `job ${job.jobId} lost its runner`, () =>
          this.finishJob(job.jobId, 'failure', lostCommunicationMessage(runnerName)),
        ),
      );
    }
  }

  removeRunner(runnerId: number): 'removed' | 'busy' | 'not-found' {
    const runner = [...this.runners.values()].find((r) => r.id === runnerId && !r.removed);
    if (!runner) return 'not-found';
    if (runner.job?.status === 'in_progress') return 'busy';
    runner.removed = true;
    return 'removed';
  }

  runnerRegistered(runnerId: number): boolean {
    return [...this.runners.values()].some((r) => r.id === runnerId && !r.removed);
  }

  /** Completes a job (success, failure or cancel); its runner exits 0. */
  finishJob(jobId: number, conclusion: JobConclusion = 'success', failureMessage?: string): void {
    const job = this.jobs.find((j) => j.jobId === jobId);
    if (!job || job.status === 'completed') return;
    this.clock.cancel(this.timers.get(jobId));
    this.timers.delete(jobId);
    job.status = 'completed';
    job.conclusion = conclusion;
    if (failureMessage) job.failureMessage = failureMessage;
    const runner = job.runnerName ? this.runners.get(job.runnerName) : undefined;
    if (runner) {
      runner.status = runner.stopped ? 'offline' : 'online';
      // Ephemeral runners are unregistered by the service once their job is done.
      runner.removed = true;
      for (const l of [...this.listeners]) l(runner.name, assignment(job));
    }
  }

  onJobFinished(listener: (runnerName: string, job: JobAssignment) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  job(jobId: number): SimJob | undefined {
    return this.jobs.find((j) => j.jobId === jobId);
  }
}

function assignment(job: SimJob): JobAssignment {
  return {
    jobId: job.jobId,
    jobGuid: job.jobGuid,
    runnerRequestId: job.runnerRequestId,
    runId: job.runId,
    runAttempt: job.runAttempt,
    repository: job.repository,
    workflowRef: job.workflowRef,
    displayName: job.displayName,
  };
}
