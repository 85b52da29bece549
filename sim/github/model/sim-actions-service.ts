import type {
  ActionsService,
  JobAssignment,
  RunnerStopKind,
  ScaleSetRegistration,
} from '../../actions-service.js';
import type { SimClock } from '../../clock.js';
import type { GitHubStore } from './github-store.js';
import { deprecatedRunnerMessage, deprecationDates } from './runner-versions.js';
import type { JobEngine } from './job-engine.js';
import type { Job, Runner, ScaleSet } from './types.js';

/** The Actions service as ARC's listener and runners see it, backed by the GitHub twin's model. */
export class SimActionsService implements ActionsService {
  constructor(
    private readonly store: GitHubStore,
    private readonly engine: JobEngine,
    private readonly clock: SimClock,
  ) {}

  registerScaleSet(registration: ScaleSetRegistration): number {
    for (const existing of this.store.scaleSets.values())
      if (existing.owner === registration.owner && existing.name === registration.name)
        return existing.id;
    const scaleSet: ScaleSet = {
      id: this.store.ids.next('scale-set'),
      owner: registration.owner,
      name: registration.name,
      runnerGroupId: 1,
      runnerGroupName: 'Default',
    };
    this.store.scaleSets.set(scaleSet.id, scaleSet);
    return scaleSet.id;
  }

  assignedJobCount(scaleSetId: number): number {
    const scaleSet = this.store.scaleSets.get(scaleSetId);
    if (!scaleSet) return 0;
    return this.queuedJobsFor(scaleSet).length + this.runningJobsFor(scaleSet).length;
  }

  registerRunner(scaleSetId: number, runnerName: string): number {
    const scaleSet = this.store.scaleSets.get(scaleSetId);
    if (!scaleSet) throw new Error(`unknown scale set ${scaleSetId}`);
    const existing = this.store.runnerByName(runnerName);
    if (existing?.registered) return existing.id;
    const runner: Runner = {
      id: this.store.ids.next('runner'),
      name: runnerName,
      scaleSet,
      status: 'offline',
      registered: true,
      jobId: null,
      assignment: null,
      stopped: null,
      stoppedAt: null,
      registeredAt: this.clock.now(),
      version: null,
    };
    this.store.addRunner(runner);
    this.engine.audit('arc', 'register-runner', `runners/${runner.id}`, 201);
    this.clock.after(
      this.engine.timing.offlineRunnerCleanupMs,
      `cleanup runner ${runner.name}`,
      () => {
        if (!runner.registered || runner.status === 'online' || runner.jobId !== null) return;
        runner.registered = false;
        this.engine.audit('github', 'delete-runner', `runners/${runner.id}`, 204);
      },
    );
    return runner.id;
  }

  runnerVersionRefusal(runnerName: string, version: string): string | undefined {
    const runner = this.store.runnerByName(runnerName);
    if (runner) runner.version = version;
    if (!this.versionRefused(version)) return undefined;
    if (runner) this.engine.audit('github', 'refuse-runner-version', `runners/${runner.id}`, 403);
    return deprecatedRunnerMessage(version);
  }

  /** True when a runner of this version may not receive jobs now. */
  versionRefused(version: string | null): boolean {
    if (version === null) return false;
    const { runtime } = deprecationDates(this.store.runnerDeprecation, version);
    return runtime !== null && this.clock.now() >= runtime;
  }

  acquireJob(runnerName: string): JobAssignment | undefined {
    const runner = this.store.runnerByName(runnerName);
    if (!runner?.registered || runner.stopped !== null || runner.jobId !== null) return undefined;
    if (this.versionRefused(runner.version)) return undefined;
    runner.status = 'online';
    const job = this.queuedJobsFor(runner.scaleSet)[0];
    if (!job) return undefined;
    return this.engine.startJob(job, runner, runner.scaleSet);
  }

  runnerStopped(runnerName: string, kind: RunnerStopKind): void {
    const runner = this.store.runnerByName(runnerName);
    if (!runner || runner.stopped !== null) return;
    runner.stopped = kind;
    runner.stoppedAt = this.clock.now();
    runner.status = 'offline';
    const job = runner.jobId === null ? undefined : this.store.jobs.get(runner.jobId);
    if (!job || job.status !== 'in_progress') return;
    if (kind === 'killed') {
      this.engine.loseJob(job);
      return;
    }
    this.engine.shutDownJob(job);
  }

  removeRunner(runnerId: number): 'removed' | 'busy' | 'not-found' {
    const runner = this.store.runners.get(runnerId);
    if (!runner?.registered) return 'not-found';
    if (isBusy(this.store, runner)) return 'busy';
    runner.registered = false;
    this.engine.audit('arc', 'remove-runner', `runners/${runner.id}`, 204);
    return 'removed';
  }

  onJobFinished(listener: (runnerName: string, job: JobAssignment) => void): () => void {
    this.engine.jobFinished.add(listener);
    return () => this.engine.jobFinished.delete(listener);
  }

  /** Queued jobs a runner of this scale set may take, oldest first. */
  queuedJobsFor(scaleSet: ScaleSet): Job[] {
    return [...this.store.jobs.values()]
      .filter((job) => job.status === 'queued' && jobFitsScaleSet(this.store, job, scaleSet))
      .sort((a, b) => a.createdAt - b.createdAt || a.id - b.id);
  }

  private runningJobsFor(scaleSet: ScaleSet): Job[] {
    return [...this.store.jobs.values()].filter((job) => {
      if (job.status !== 'in_progress' || job.runnerId === null) return false;
      return this.store.runners.get(job.runnerId)?.scaleSet === scaleSet;
    });
  }
}

/** GitHub thinks a runner busy while a job it took is still in progress (even if the runner is dead). */
export function isBusy(store: GitHubStore, runner: Runner): boolean {
  if (runner.jobId === null) return false;
  return store.jobs.get(runner.jobId)?.status === 'in_progress';
}

/** A job goes to a scale set of its repository's owner (or the repository itself) named by its labels. */
function jobFitsScaleSet(store: GitHubStore, job: Job, scaleSet: ScaleSet): boolean {
  const run = store.runs.get(job.runId);
  if (!run) return false;
  const ownerMatches =
    scaleSet.owner === run.repo.owner.login || scaleSet.owner === run.repo.fullName;
  return (
    ownerMatches && job.labels.some((label) => label.toLowerCase() === scaleSet.name.toLowerCase())
  );
}
