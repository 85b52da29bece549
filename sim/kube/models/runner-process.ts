/**
 * The runner process inside a runner pod's `runner` container: comes online, polls the Actions
 * service for a job, exits 0 when its job finishes, and reports SIGTERM or a kill to the service.
 */
import type { ActionsService, JobAssignment } from '../../actions-service.js';
import type { TimerHandle } from '../../clock.js';
import type { ModelContext } from './model-context.js';

export type RunnerState = 'starting' | 'idle' | 'busy' | 'stopping' | 'exited';

export interface RunnerHooks {
  online(): void;
  jobStarted(job: JobAssignment): void;
  exited(exitCode: number, reason: string): void;
}

export class RunnerProcess {
  state: RunnerState = 'starting';
  job: JobAssignment | undefined;
  private timer: TimerHandle | undefined;

  constructor(
    private readonly ctx: ModelContext,
    private readonly service: ActionsService,
    readonly name: string,
    private readonly hooks: RunnerHooks,
  ) {
    this.timer = ctx.clock.after(ctx.timings.runnerStartupMs, `runner ${name} online`, () => {
      if (this.state !== 'starting') return;
      this.state = 'idle';
      hooks.online();
      this.poll();
    });
  }

  private poll(): void {
    if (this.state !== 'idle') return;
    const job = this.service.acquireJob(this.name);
    if (job) {
      this.state = 'busy';
      this.job = job;
      this.ctx.log('runner', 'Running job', {
        runner: this.name,
        job: job.displayName,
        jobId: job.jobId,
      });
      this.hooks.jobStarted(job);
      return;
    }
    this.timer = this.ctx.clock.after(
      this.ctx.timings.runnerPollMs,
      `runner ${this.name} poll`,
      () => this.poll(),
    );
  }

  /** The service finished this runner's job: the ephemeral runner exits 0. */
  jobFinished(): void {
    if (this.state !== 'busy') return;
    this.service.runnerStopped(this.name, 'completed');
    this.exit(0, 'Completed');
  }

  /** SIGTERM: an idle runner exits at once; a busy one fails its job and exits shortly after. */
  sigterm(): void {
    if (this.state === 'exited' || this.state === 'stopping') return;
    const busy = this.state === 'busy';
    this.service.runnerStopped(this.name, 'sigterm');
    if (!busy) return this.exit(143, 'Error');
    this.state = 'stopping';
    this.ctx.clock.cancel(this.timer);
    this.timer = this.ctx.clock.after(
      this.ctx.timings.runnerShutdownMs,
      `runner ${this.name} shutdown`,
      () => this.exit(143, 'Error'),
    );
  }

  /** SIGKILL / OOM / the machine vanished: no chance to report the job. */
  kill(exitCode = 137, reason = 'Error'): void {
    if (this.state === 'exited') return;
    this.service.runnerStopped(this.name, 'killed');
    this.exit(exitCode, reason);
  }

  /** The process dies without telling anyone and without a status update (node power loss). */
  vanish(): void {
    if (this.state === 'exited') return;
    this.service.runnerStopped(this.name, 'killed');
    this.state = 'exited';
    this.ctx.clock.cancel(this.timer);
  }

  private exit(code: number, reason: string): void {
    if (this.state === 'exited') return;
    this.state = 'exited';
    this.ctx.clock.cancel(this.timer);
    this.hooks.exited(code, reason);
  }
}
