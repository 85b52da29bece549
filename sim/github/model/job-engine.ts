import type { JobAssignment } from '../../actions-service.js';
import type { SimClock, TimerHandle } from '../../clock.js';
import {
  EXIT_CODE_1,
  OPERATION_CANCELED,
  SHUTDOWN_SIGNAL,
  failureAnnotation,
  lostCommunication,
} from './annotation-texts.js';
import type { EventHub } from './github-event.js';
import type { GitHubStore } from './github-store.js';
import { DAY_MS } from './github-store.js';
import { jobTarget } from './audit-targets.js';
import { createJob } from './create-job.js';
import type { ExpandedJob } from './job-names.js';
import { expandJobs } from './job-names.js';
import type { Actor, Annotation, Job, JobConclusion, Run, Runner, ScaleSet } from './types.js';

export interface EngineTiming {
  /**
   * A job's lock is valid this long after its last renewal. @default 576000 (9 min 36 s): GitHub
   * Actions Gateway measured kill → `failure` at 9m36s–9m45s for SIGKILLed runners
   * (actions-gateway/github-actions-gateway, docs/design/04-operational-flows.md).
   */
  lockTtlMs: number;
  /** The runner renews the lock this often (actions/runner JobDispatcher.cs). @default 60000 */
  lockRenewMs: number;
  /** A queued job nobody picks up is cancelled after this. @default 86400000 (24 h) */
  queueTimeoutMs: number;
  /** Duration of a job whose spec gives none. @default 60000 */
  defaultDurationMs: number;
  /** An ephemeral runner that never connected is deleted after this. @default 86400000 (1 day) */
  offlineRunnerCleanupMs: number;
  /**
   * How long after a busy runner's SIGTERM GitHub concludes its job `failure`. GAG measured 15–26 s
   * for a graceful stop (same document); the faithful value is about 20000. @default 0 (at once)
   */
  gracefulStopConcludeMs: number;
  /**
   * How long after a `force-cancel` a job whose runner is dead concludes `cancelled`. GAG measured a
   * force-cancelled run whose job never started concluding about 1 s later; GitHub's docs say
   * force-cancel "bypasses conditions that would otherwise cause the cancellation to fail".
   * The faithful value is 1000. @default 0 (at once)
   */
  forceCancelConcludeMs: number;
}

export const DEFAULT_TIMING: EngineTiming = {
  lockTtlMs: 576_000,
  lockRenewMs: 60_000,
  queueTimeoutMs: DAY_MS,
  defaultDurationMs: 60_000,
  offlineRunnerCleanupMs: DAY_MS,
  gracefulStopConcludeMs: 0,
  forceCancelConcludeMs: 0,
};

type JobFinishedListener = (runnerName: string, job: JobAssignment) => void;

/** Job and run lifecycles: queueing, needs, running, completion, fail-fast and lost runners. */
export class JobEngine {
  private readonly timers = new Map<number, TimerHandle>();
  readonly jobFinished = new Set<JobFinishedListener>();
  readonly jobQueued = new Set<(job: Job) => void>();

  constructor(
    private readonly store: GitHubStore,
    private readonly clock: SimClock,
    private readonly events: EventHub,
    readonly timing: EngineTiming,
  ) {}

  /** Starts an attempt of `run` that (re-)executes the jobs named. */
  startAttempt(run: Run, names: string[]): void {
    run.pending = names;
    this.advance(run);
  }

  /** Creates every pending job whose needs have finished; completes the run when nothing is left. */
  advance(run: Run): void {
    const expanded = new Map(expandJobs(run.workflow.spec).map((job) => [job.name, job]));
    let progressed = true;
    while (progressed) {
      progressed = false;
      for (const name of [...run.pending]) {
        if (!run.pending.includes(name)) continue;
        const job = expanded.get(name);
        if (!job) throw new Error(`job "${name}" is not in workflow ${run.workflow.spec.name}`);
        const verdict = this.needsVerdict(run, job, expanded);
        if (verdict === 'wait') continue;
        run.pending = run.pending.filter((pendingName) => pendingName !== name);
        progressed = true;
        if (verdict === 'ready' && !run.cancelling) this.queueJob(run, job);
        else this.skipJob(run, job, run.cancelling ? 'cancelled' : 'skipped');
      }
    }
    this.completeRunIfDone(run);
  }

  private needsVerdict(
    run: Run,
    job: ExpandedJob,
    expanded: Map<string, ExpandedJob>,
  ): 'wait' | 'ready' | 'skip' {
    const needed = [...expanded.values()].filter((other) =>
      (job.spec.needs ?? []).includes(other.spec.name),
    );
    let ok = true;
    for (const need of needed) {
      if (run.pending.includes(need.name)) return 'wait';
      const latest = this.store.latestJob(run, need.name);
      if (!latest || latest.status !== 'completed') return 'wait';
      if (latest.conclusion !== 'success') ok = false;
    }
    return ok ? 'ready' : 'skip';
  }

  private newJob(run: Run, expanded: ExpandedJob): Job {
    const job = createJob(this.store, run, expanded, this.clock.now());
    run.jobs.push(job);
    this.store.jobs.set(job.id, job);
    return job;
  }

  private queueJob(run: Run, expanded: ExpandedJob): void {
    const job = this.newJob(run, expanded);
    const environment = expanded.spec.environment;
    if (environment) {
      job.status = 'waiting';
      this.emitJob('waiting', job, run);
      this.setTimer(
        job,
        this.clock.after(environment.approveAfterMs, `approve ${job.name}`, () =>
          this.enqueue(job),
        ),
      );
      return;
    }
    this.enqueue(job);
  }

  private enqueue(job: Job): void {
    const run = this.runOf(job);
    job.status = 'queued';
    this.emitJob('queued', job, run);
    this.setTimer(
      job,
      this.clock.after(this.timing.queueTimeoutMs, `queue timeout ${job.id}`, () => {
        if (job.status !== 'queued') return;
        this.audit('github', 'cancel-queued-job', jobTarget(run, job), 200);
        this.finishJob(job, 'cancelled', []);
      }),
    );
    for (const listener of [...this.jobQueued]) listener(job);
  }

  private skipJob(
    run: Run,
    expanded: ExpandedJob,
    conclusion: JobConclusion,
    annotations: Annotation[] = [],
  ): void {
    const job = this.newJob(run, expanded);
    job.status = 'completed';
    job.conclusion = conclusion;
    job.completedAt = this.clock.now();
    job.annotations.push(...annotations);
    this.emitJob('completed', job, run);
  }

  /**
   * An attempt past the re-run limit: it starts, but every job it would re-run fails at once with
   * `message` as its annotation, so the run's check suite fails (github.blog changelog
   * 2026-04-10, "Actions workflows are limited to 50 reruns").
   */
  failAttempt(run: Run, names: string[], message: string): void {
    const expanded = new Map(expandJobs(run.workflow.spec).map((job) => [job.name, job]));
    run.pending = [];
    for (const name of names) {
      const job = expanded.get(name);
      if (job) this.skipJob(run, job, 'failure', [failureAnnotation(message)]);
    }
    this.completeRunIfDone(run);
  }

  /** A runner of `scaleSet` takes `job`. */
  startJob(job: Job, runner: Runner, scaleSet: ScaleSet): JobAssignment {
    const run = this.runOf(job);
    const now = this.clock.now();
    this.clearTimer(job);
    job.status = 'in_progress';
    job.startedAt = now;
    job.runnerId = runner.id;
    job.runnerName = runner.name;
    job.runnerGroupId = scaleSet.runnerGroupId;
    job.runnerGroupName = scaleSet.runnerGroupName;
    job.lockRenewedAt = now;
    job.steps = [
      {
        name: 'Set up job',
        number: 1,
        status: 'completed',
        conclusion: 'success',
        startedAt: now,
        completedAt: now,
      },
      {
        name: job.spec.fails?.step ?? `Run ${job.spec.name}`,
        number: 2,
        status: 'in_progress',
        conclusion: null,
        startedAt: now,
        completedAt: null,
      },
    ];
    const assignment: JobAssignment = {
      jobId: job.id,
      jobGuid: job.guid,
      runnerRequestId: job.runnerRequestId,
      runId: run.id,
      runAttempt: job.runAttempt,
      repository: run.repo.fullName,
      workflowRef: `${run.repo.fullName}/${run.workflow.path}@refs/heads/${run.headBranch}`,
      displayName: job.name,
    };
    runner.jobId = job.id;
    runner.assignment = assignment;
    if (run.status === 'queued') {
      run.status = 'in_progress';
      run.updatedAt = now;
      this.emitRun('in_progress', run);
    }
    this.emitJob('in_progress', job, run);
    const duration = job.spec.durationMs ?? this.timing.defaultDurationMs;
    if (job.failsOnItsOwn) {
      const after = job.spec.fails?.afterMs ?? duration;
      this.setTimer(
        job,
        this.clock.after(after, `job ${job.id} fails`, () =>
          this.finishJob(job, 'failure', [failureAnnotation(EXIT_CODE_1)]),
        ),
      );
    } else {
      this.setTimer(
        job,
        this.clock.after(duration, `job ${job.id} succeeds`, () =>
          this.finishJob(job, 'success', []),
        ),
      );
    }
    return assignment;
  }

  /** Ends a job (idempotent): releases its runner, announces it, applies fail-fast, moves the run on. */
  finishJob(job: Job, conclusion: JobConclusion, annotations: Annotation[]): void {
    if (job.status === 'completed') return;
    const run = this.runOf(job);
    const now = this.clock.now();
    this.clearTimer(job);
    job.status = 'completed';
    job.conclusion = conclusion;
    job.completedAt = now;
    job.annotations.push(...annotations);
    for (const step of job.steps) {
      if (step.status === 'completed') continue;
      step.status = 'completed';
      step.conclusion = conclusion;
      step.completedAt = now;
    }
    if (job.steps.length > 0) {
      const stepConclusion = conclusion === 'success' ? 'success' : 'skipped';
      job.steps.push({
        name: 'Complete job',
        number: job.steps.length + 1,
        status: 'completed',
        conclusion: stepConclusion,
        startedAt: now,
        completedAt: now,
      });
    }
    const runner = job.runnerId === null ? undefined : this.store.runners.get(job.runnerId);
    if (runner) this.releaseRunner(runner);
    this.emitJob('completed', job, run);
    if (conclusion === 'failure') this.failFast(run, job);
    this.advance(run);
  }

  private releaseRunner(runner: Runner): void {
    const assignment = runner.assignment;
    // Ephemeral registrations end with their job.
    runner.registered = false;
    if (runner.stopped === null && assignment) {
      for (const listener of [...this.jobFinished]) listener(runner.name, assignment);
    }
  }

  private failFast(run: Run, failed: Job): void {
    if (!failed.matrix || failed.spec.failFast === false) return;
    for (const sibling of this.store.latestJobs(run)) {
      if (
        sibling === failed ||
        sibling.spec.name !== failed.spec.name ||
        sibling.status === 'completed'
      )
        continue;
      this.cancelJob(sibling, false);
    }
  }

  /**
   * Cancels a job. One on a runner that cannot answer (killed) only ends when its lock lapses,
   * unless forced: then it ends `forceCancelConcludeMs` later. A forced cancel of a job whose
   * runner is shutting down (SIGTERM, not yet concluded) ends it the same way.
   */
  cancelJob(job: Job, force: boolean): void {
    if (job.status === 'completed') return;
    const runner = job.runnerId === null ? undefined : this.store.runners.get(job.runnerId);
    const runnerGone = job.status === 'in_progress' && (runner?.stopped ?? null) !== null;
    if (runnerGone && !force) {
      job.cancelRequested = true;
      return;
    }
    const annotations = job.status === 'in_progress' ? [failureAnnotation(OPERATION_CANCELED)] : [];
    if (runnerGone && this.timing.forceCancelConcludeMs > 0) {
      job.cancelRequested = true;
      this.setTimer(
        job,
        this.clock.after(this.timing.forceCancelConcludeMs, `force-cancel ${job.id}`, () =>
          this.finishJob(job, 'cancelled', annotations),
        ),
      );
      return;
    }
    this.finishJob(job, 'cancelled', annotations);
  }

  /**
   * A busy runner got SIGTERM: it reports the shutdown, and GitHub concludes the job `failure`
   * `gracefulStopConcludeMs` later (at once when 0).
   */
  shutDownJob(job: Job): void {
    const conclude = () => {
      const run = this.runOf(job);
      const cancelled = job.cancelRequested;
      this.audit('github', cancelled ? 'cancel-job' : 'fail-job', jobTarget(run, job), 200);
      this.finishJob(
        job,
        cancelled ? 'cancelled' : 'failure',
        cancelled
          ? [failureAnnotation(OPERATION_CANCELED)]
          : [failureAnnotation(SHUTDOWN_SIGNAL), failureAnnotation(OPERATION_CANCELED)],
      );
    };
    if (this.timing.gracefulStopConcludeMs <= 0) return conclude();
    this.setTimer(
      job,
      this.clock.after(this.timing.gracefulStopConcludeMs, `shutdown ${job.id}`, conclude),
    );
  }

  /** A killed runner stops renewing: its job fails when the lock from the last renewal lapses. */
  loseJob(job: Job): void {
    const renewedAt = job.lockRenewedAt ?? job.startedAt;
    const now = this.clock.now();
    const lastRenewal =
      renewedAt + Math.floor((now - renewedAt) / this.timing.lockRenewMs) * this.timing.lockRenewMs;
    job.lockRenewedAt = lastRenewal;
    const runnerName = job.runnerName ?? '';
    this.setTimer(
      job,
      this.clock.at(lastRenewal + this.timing.lockTtlMs, `lock lapses ${job.id}`, () => {
        const run = this.runOf(job);
        this.audit(
          'github',
          job.cancelRequested ? 'cancel-job' : 'fail-job',
          jobTarget(run, job),
          200,
        );
        this.finishJob(job, job.cancelRequested ? 'cancelled' : 'failure', [
          failureAnnotation(lostCommunication(runnerName)),
        ]);
      }),
    );
  }

  private completeRunIfDone(run: Run): void {
    if (run.status === 'completed' || run.pending.length > 0) return;
    const latest = this.store.latestJobs(run);
    if (latest.some((job) => job.status !== 'completed')) return;
    const conclusions = new Set(latest.map((job) => job.conclusion));
    run.conclusion = conclusions.has('failure')
      ? 'failure'
      : run.cancelling || conclusions.has('cancelled')
        ? 'cancelled'
        : 'success';
    run.status = 'completed';
    run.updatedAt = this.clock.now();
    run.completedAt = run.updatedAt;
    this.emitRun('completed', run);
  }

  runOf(job: Job): Run {
    const run = this.store.runs.get(job.runId);
    if (!run) throw new Error(`job ${job.id} belongs to unknown run ${job.runId}`);
    return run;
  }

  audit(by: Actor, verb: string, target: string, status: number, runAttempt?: number): void {
    this.store.audit.push({
      at: this.clock.now(),
      by,
      api: 'github',
      verb,
      target,
      status,
      ...(runAttempt !== undefined ? { runAttempt } : {}),
    });
  }

  emitRun(action: 'requested' | 'in_progress' | 'completed', run: Run): void {
    this.events.emit({ type: 'workflow_run', action, at: this.clock.now(), run });
  }

  private emitJob(
    action: 'queued' | 'waiting' | 'in_progress' | 'completed',
    job: Job,
    run: Run,
  ): void {
    this.events.emit({ type: 'workflow_job', action, at: this.clock.now(), job, run });
  }

  private setTimer(job: Job, handle: TimerHandle): void {
    this.clearTimer(job);
    this.timers.set(job.id, handle);
  }

  private clearTimer(job: Job): void {
    this.clock.cancel(this.timers.get(job.id));
    this.timers.delete(job.id);
  }
}
