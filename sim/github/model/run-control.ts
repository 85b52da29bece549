import type { Clock } from '../../clock.js';
import type { GitHubStore } from './github-store.js';
import { DAY_MS } from './github-store.js';
import { nodeId } from './id-source.js';
import type { JobEngine } from './job-engine.js';
import { jobTarget, runTarget } from './audit-targets.js';
import { expandJobs, withDependents } from './job-names.js';
import type { Actor, Run, Workflow } from './types.js';

/** The answer GitHub gives a mutating call, independent of HTTP. */
export interface Outcome {
  status: number;
  message?: string;
}

const ALREADY_RUNNING = 'This workflow is already running';
const TOO_OLD = 'Unable to retry this workflow run because it was created over a month ago';
const CANNOT_RETRY = 'This workflow run cannot be retried';
const CANNOT_CANCEL = 'Cannot cancel a workflow run that is completed.';
/** A force-cancel of a hung run (actions/runner#3329). */
const FAILED_TO_CANCEL = 'Failed to cancel workflow run';
/** A cancel of a run just re-run (actions/runner#3872). */
const RERUN_NOT_QUEUED = 'Cannot cancel a workflow re-run that has not yet queued.';
/**
 * "You can re-run a workflow run, all failed jobs in a workflow run, or specific jobs in a workflow
 * run up to 30 days after its initial run. … A workflow run can be re-run a maximum of 50 times.
 * This limit includes both full re-runs and re-runs of a subset of jobs."
 * (docs.github.com/en/actions/managing-workflow-runs/re-running-workflows-and-jobs)
 */
const RERUN_WINDOW_MS = 30 * DAY_MS;
export const MAX_RERUNS = 50;
/**
 * Past the limit GitHub answers no API error: "you will get a failed check suite with an
 * annotation indicating you have hit the limit" (github.blog changelog 2026-04-10). The changelog
 * does not quote the annotation; this text is the twin's own.
 */
export const RERUN_LIMIT_ANNOTATION = `This workflow run has been re-run the maximum of ${MAX_RERUNS} times and cannot be re-run again.`;

/** A cancel or force-cancel refused as real GitHub sometimes refuses it; the run is unchanged. */
export interface CancelFailure {
  verb: 'cancel' | 'force-cancel';
  /** 500 `Failed to cancel workflow run`, or 409 `Cannot cancel a workflow re-run that has not yet queued.` */
  status: 500 | 409;
  /** Sim-time window (ms since the epoch) in which calls fail. */
  from?: number;
  until?: number;
  /** Fail at most this many calls (default: every call in the window). */
  times?: number;
}

/** How GitHub refuses calls beyond the plain rules. Defaults: none of it. */
export interface RunControlKnobs {
  /**
   * `403 This workflow is already running` keeps answering re-runs this long after the run
   * completed. GAG saw about 20 paced `rerun-failed-jobs` calls refused after a kubelet eviction
   * (docs/design/04-operational-flows.md). @default 0
   */
  alreadyRunningAfterCompletionMs: number;
  cancelFailures: CancelFailure[];
}

export const DEFAULT_RUN_CONTROL_KNOBS: RunControlKnobs = {
  alreadyRunningAfterCompletionMs: 0,
  cancelFailures: [],
};

export interface TriggerOptions {
  event?: string;
  headBranch?: string;
  actor?: string;
  /** Backdate the run (e.g. to test the one-month re-run limit). */
  createdAt?: number;
}

/** Workflow runs as users and Apps drive them: trigger, re-run, cancel. */
export class RunControl {
  private readonly failureHits = new Map<CancelFailure, number>();

  constructor(
    private readonly store: GitHubStore,
    private readonly engine: JobEngine,
    private readonly clock: Clock,
    readonly knobs: RunControlKnobs = { ...DEFAULT_RUN_CONTROL_KNOBS, cancelFailures: [] },
  ) {}

  trigger(workflow: Workflow, options: TriggerOptions = {}): Run {
    const now = this.clock.now();
    const id = this.store.ids.next('run');
    const actor = this.store.account(options.actor ?? 'octocat', 'User');
    const createdAt = options.createdAt ?? now;
    const run: Run = {
      id,
      nodeId: nodeId('WFR', id),
      workflow,
      repo: workflow.repo,
      runNumber: this.store.nextRunNumber(workflow),
      attempt: 1,
      event: options.event ?? 'push',
      headSha: this.store.ids.hex(40),
      headBranch: options.headBranch ?? workflow.repo.defaultBranch,
      actor,
      triggeringActor: actor,
      checkSuiteId: this.store.ids.next('suite'),
      checkSuiteNodeId: '',
      createdAt,
      updatedAt: now,
      runStartedAt: createdAt,
      status: 'queued',
      conclusion: null,
      jobs: [],
      pending: [],
      cancelling: false,
      completedAt: null,
    };
    run.checkSuiteNodeId = nodeId('CS', run.checkSuiteId);
    this.store.runs.set(id, run);
    this.engine.emitRun('requested', run);
    this.engine.startAttempt(
      run,
      expandJobs(workflow.spec).map((job) => job.name),
    );
    return run;
  }

  rerunJob(jobId: number, by: Actor, login?: string): Outcome {
    const job = this.store.jobs.get(jobId);
    if (!job) return { status: 404, message: 'Not Found' };
    const run = this.engine.runOf(job);
    return this.rerun(run, [job.name], { by, login }, 'rerun-job', jobTarget(run, job));
  }

  rerunFailedJobs(runId: number, by: Actor, login?: string): Outcome {
    const run = this.store.runs.get(runId);
    if (!run) return { status: 404, message: 'Not Found' };
    const failed = this.store
      .latestJobs(run)
      .filter((job) => job.conclusion === 'failure' || job.conclusion === 'cancelled')
      .map((job) => job.name);
    return this.rerun(run, failed, { by, login }, 'rerun-failed-jobs', runTarget(run));
  }

  rerunRun(runId: number, by: Actor, login?: string): Outcome {
    const run = this.store.runs.get(runId);
    if (!run) return { status: 404, message: 'Not Found' };
    const all = expandJobs(run.workflow.spec).map((job) => job.name);
    return this.rerun(run, all, { by, login }, 'rerun-run', runTarget(run));
  }

  private rerun(
    run: Run,
    names: string[],
    who: { by: Actor; login: string | undefined },
    verb: string,
    target: string,
  ): Outcome {
    const outcome = this.rerunOutcome(run, names);
    this.engine.audit(who.by, verb, target, outcome.status, run.attempt);
    if (outcome.status !== 201) return outcome;
    const now = this.clock.now();
    run.attempt += 1;
    run.status = 'queued';
    run.conclusion = null;
    run.cancelling = false;
    run.completedAt = null;
    run.updatedAt = now;
    run.runStartedAt = now;
    run.triggeringActor = this.actorAccount(who);
    this.engine.emitRun('requested', run);
    // The jobs named, and every job that needs one of them (the endpoints' OpenAPI descriptions:
    // "Re-run a job and its dependent jobs", "Re-run all of the failed jobs and their dependent jobs").
    const rerun = [...withDependents(run.workflow.spec, names)];
    if (run.attempt - 1 > MAX_RERUNS) this.engine.failAttempt(run, rerun, RERUN_LIMIT_ANNOTATION);
    else this.engine.startAttempt(run, rerun);
    return outcome;
  }

  /** Who re-ran a run, as `triggering_actor` shows it: the App's bot, or the person. */
  private actorAccount(who: { by: Actor; login: string | undefined }) {
    if (who.by === 'runner-medic') return this.store.account('runner-medic[bot]', 'Bot');
    return this.store.account(who.login ?? 'octocat', 'User');
  }

  private rerunOutcome(run: Run, names: string[]): Outcome {
    if (run.status !== 'completed') return { status: 403, message: ALREADY_RUNNING };
    const completedAt = run.completedAt ?? run.updatedAt;
    if (this.clock.now() - completedAt < this.knobs.alreadyRunningAfterCompletionMs)
      return { status: 403, message: ALREADY_RUNNING };
    if (this.clock.now() - run.createdAt > RERUN_WINDOW_MS)
      return { status: 403, message: TOO_OLD };
    if (names.length === 0) return { status: 403, message: CANNOT_RETRY };
    return { status: 201 };
  }

  cancel(runId: number, by: Actor, force: boolean): Outcome {
    const run = this.store.runs.get(runId);
    if (!run) return { status: 404, message: 'Not Found' };
    const verb = force ? 'force-cancel' : 'cancel';
    if (run.status === 'completed') {
      this.engine.audit(by, verb, runTarget(run), 409, run.attempt);
      return { status: 409, message: CANNOT_CANCEL };
    }
    const failure = this.cancelFailure(verb);
    if (failure) {
      this.engine.audit(by, verb, runTarget(run), failure.status, run.attempt);
      return failure;
    }
    this.engine.audit(by, verb, runTarget(run), 202, run.attempt);
    run.cancelling = true;
    run.updatedAt = this.clock.now();
    for (const job of this.store.latestJobs(run)) this.engine.cancelJob(job, force);
    this.engine.advance(run);
    return { status: 202 };
  }

  /** The first configured failure that applies to this call now, counted as used. */
  private cancelFailure(verb: 'cancel' | 'force-cancel'): Outcome | undefined {
    const now = this.clock.now();
    for (const failure of this.knobs.cancelFailures) {
      if (failure.verb !== verb) continue;
      if (failure.from !== undefined && now < failure.from) continue;
      if (failure.until !== undefined && now >= failure.until) continue;
      const hits = this.failureHits.get(failure) ?? 0;
      if (failure.times !== undefined && hits >= failure.times) continue;
      this.failureHits.set(failure, hits + 1);
      return failure.status === 500
        ? { status: 500, message: FAILED_TO_CANCEL }
        : { status: 409, message: RERUN_NOT_QUEUED };
    }
    return undefined;
  }
}
