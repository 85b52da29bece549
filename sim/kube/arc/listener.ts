/**
 * The scale set listener. Each message batch carries `TotalAssignedJobs`; the listener
 * merge-patches `spec: {replicas: min(minRunners + assigned, maxRunners), patchID}` onto the
 * EphemeralRunnerSet (cmd/ghalistener). A batch is sent when the statistics change or a job of
 * the scale set completes, and an empty batch every `listenerEmptyBatchMs` (the long poll timing
 * out). On an empty batch the target never drops below the last patch, and at `minRunners` the
 * patch carries `patchID: 0`, the only patch that lets the ERS scale idle runners down.
 * On JobStarted it merge-patches the runner's EphemeralRunner status with the job fields
 * (skipping a NotFound runner).
 */
import type { ActionsService, JobAssignment } from '../../actions-service.js';
import type { TimerHandle } from '../../clock.js';
import { ApiError } from '../api/errors.js';
import type { ModelContext } from '../models/model-context.js';
import type { AutoscalingRunnerSet, EphemeralRunnerSet } from '../types.js';
import type { ArcBehaviour } from './arc-version.js';

const ACTOR = 'arc';

export class Listener {
  private timer: TimerHandle | undefined;
  private lastPatch = -1;
  private lastCount = -1;
  private lastBatchAt = -Infinity;
  private completed = 0;
  private patchSeq = 0;
  private stopped = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly ctx: ModelContext,
    private readonly service: ActionsService,
    private readonly arc: ArcBehaviour,
    readonly namespace: string,
    readonly scaleSetName: string,
    readonly scaleSetId: number,
  ) {
    this.unsubscribe = service.onJobFinished((runnerName) => {
      const ars = this.ars();
      const ers = ars && this.ers(ars);
      if (ers && runnerName.startsWith(`${ers.metadata.name}-runner-`)) this.completed++;
    });
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    this.ctx.clock.cancel(this.timer);
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = this.ctx.clock.after(delay, `listener ${this.scaleSetName}`, () => {
      this.poll();
      this.schedule(this.ctx.timings.listenerPollMs);
    });
  }

  private ars(): AutoscalingRunnerSet | undefined {
    return this.ctx.api.store.peek(
      'autoscalingrunnersets.actions.github.com',
      this.namespace,
      this.scaleSetName,
    ) as AutoscalingRunnerSet | undefined;
  }

  private ers(ars: AutoscalingRunnerSet): EphemeralRunnerSet | undefined {
    return this.ctx.api.store
      .scan('ephemeralrunnersets.actions.github.com', this.namespace)
      .find(
        (e) =>
          !e.metadata.deletionTimestamp &&
          e.metadata.ownerReferences?.some((r) => r.uid === ars.metadata.uid),
      ) as EphemeralRunnerSet | undefined;
  }

  poll(): void {
    const ars = this.ars();
    if (!ars) return;
    const ers = this.ers(ars);
    if (!ers) return;
    const now = this.ctx.clock.now();
    const assigned = this.service.assignedJobCount(this.scaleSetId);
    const changed = assigned !== this.lastCount || this.completed > 0;
    if (!changed && now - this.lastBatchAt < this.ctx.timings.listenerEmptyBatchMs) return;
    const min = ars.spec.minRunners ?? 0;
    const max = ars.spec.maxRunners ?? Number.MAX_SAFE_INTEGER;
    let target = Math.min(min + assigned, max);
    this.patchSeq++;
    let patchID = this.patchSeq;
    if (!changed) {
      target = Math.max(this.lastPatch, target);
      if (target === min) patchID = 0;
    }
    this.ctx.log('arc/listener', 'Calculated target runner count', {
      'assigned job': assigned,
      decision: target,
      min,
      max,
      currentRunnerCount: this.lastPatch,
      jobsCompleted: this.completed,
    });
    this.ctx.api.patch(
      ACTOR,
      'ephemeralrunnersets',
      this.namespace,
      ers.metadata.name as string,
      'merge',
      { spec: { replicas: target, patchID } },
    );
    this.lastPatch = target;
    this.lastCount = assigned;
    this.lastBatchAt = now;
    this.completed = 0;
  }

  /** JobStarted: the runner took a job; patch its EphemeralRunner status after the message latency. */
  jobStarted(runnerName: string, job: JobAssignment): void {
    this.ctx.clock.after(this.ctx.timings.jobStartedLatencyMs, `JobStarted ${runnerName}`, () => {
      const status: Record<string, unknown> = {
        jobRequestId: job.runnerRequestId,
        jobRepositoryName: job.repository,
        workflowRunId: job.runId,
        jobWorkflowRef: job.workflowRef,
        jobDisplayName: job.displayName,
      };
      if (this.arc.writesJobId) status.jobId = job.jobGuid;
      // 0.15 (#4646): the listener owns the Running transition: Running = took a job.
      if (this.arc.runningMeansBusy) status.phase = 'Running';
      try {
        this.ctx.api.patch(
          ACTOR,
          'ephemeralrunners',
          this.namespace,
          runnerName,
          'merge',
          { status },
          { subresource: 'status' },
        );
        this.ctx.log('arc/listener', 'Updated ephemeral runner status with job information', {
          runnerName,
          jobId: job.jobGuid,
        });
      } catch (e) {
        if (e instanceof ApiError && e.code === 404) {
          this.ctx.log('arc/listener', 'Ephemeral runner not found; skipping JobStarted patch', {
            runnerName,
          });
          return;
        }
        throw e;
      }
    });
  }
}
