/**
 * The runner process inside a runner pod's `runner` container: comes online, polls the Actions
 * service for a job, exits 0 when its job finishes, and reports SIGTERM or a kill to the service.
 */
import type { ActionsService, JobAssignment } from '../../actions-service.js';
import type { TimerHandle } from '../../clock.js';
import type { ModelContext } from './model-context.js';

export type RunnerState = 'starting' | 'idle' | 'busy' | 'stopping' | 'exited';

/**
 * What the runner container does with SIGTERM (per scale set):
 * - `default`: the runner's own handling (actions/runner, Runner.Listener): a busy runner fails
 *   its job with "The runner has received a shutdown signal." and exits; GitHub concludes the job
 *   (a graceful loss).
 * - `graceful-stop`: the entrypoint `infra/kubernetes/runner/graceful-stop.sh`: an idle runner
 *   exits promptly; a busy one waits for its job up to `stopTimeoutMs`
 *   (RUNNER_GRACEFUL_STOP_TIMEOUT, default 15 s) and exits 0 when it ends, else stops the worker
 *   (a graceful loss). SIGKILL before then is a hard loss.
 * - `none`: the signal never reaches the runner (a shell entrypoint that does not forward it):
 *   it keeps running, idle ones keep taking jobs, until SIGKILL at the end of the grace period
 *   (a hard loss for a busy runner).
 */
export type SigtermBehaviour = 'default' | 'graceful-stop' | 'none';

export interface RunnerBehaviour {
  onSigterm: SigtermBehaviour;
  /** graceful-stop only: how long a running job is waited for (default 15 s). */
  stopTimeoutMs?: number;
  /** The runner exits 0 at start without taking a job (a deprecated runner version). */
  deprecated?: boolean;
}

const GRACEFUL_STOP_DEFAULT_TIMEOUT_MS = 15_000;

export interface RunnerHooks {
  online(): void;
  jobStarted(job: JobAssignment): void;
  exited(exitCode: number, reason: string): void;
}

export class RunnerProcess {
  state: RunnerState = 'starting';
  job: JobAssignment | undefined;
  /** graceful-stop: SIGTERM arrived while busy; waiting for the job to end. */
  draining = false;
  private timer: TimerHandle | undefined;

  constructor(
    private readonly ctx: ModelContext,
    private readonly service: ActionsService,
    readonly name: string,
    private readonly hooks: RunnerHooks,
    readonly behaviour: RunnerBehaviour = { onSigterm: 'default' },
  ) {
    this.timer = ctx.clock.after(ctx.timings.runnerStartupMs, `runner ${name} online`, () => {
      if (this.state !== 'starting') return;
      if (behaviour.deprecated) {
        // actions/runner: a version below GitHub's floor is refused at session creation and the
        // listener exits 0 without taking a job.
        ctx.log('runner', 'Runner version is deprecated; exiting', { runner: name });
        this.service.runnerStopped(this.name, 'completed');
        return this.exit(0, 'Completed');
      }
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

  /** SIGTERM, handled as `behaviour.onSigterm` says. */
  sigterm(): void {
    if (this.state === 'exited' || this.state === 'stopping' || this.draining) return;
    const mode = this.behaviour.onSigterm;
    this.ctx.log('runner', 'SIGTERM', { runner: this.name, handling: mode, state: this.state });
    if (mode === 'none') return;
    if (mode === 'graceful-stop') return this.gracefulStop();
    this.shutdownSignal();
  }

  /** graceful-stop.sh: idle → the listener gets SIGINT and exits; busy → wait for the job. */
  private gracefulStop(): void {
    if (this.state !== 'busy') {
      this.ctx.clock.cancel(this.timer);
      this.state = 'stopping';
      this.service.runnerStopped(this.name, 'sigterm');
      this.timer = this.ctx.clock.after(
        this.ctx.timings.runnerShutdownMs,
        `runner ${this.name} listener exits`,
        () => this.exit(0, 'Completed'),
      );
      return;
    }
    this.draining = true;
    const timeout = this.behaviour.stopTimeoutMs ?? GRACEFUL_STOP_DEFAULT_TIMEOUT_MS;
    this.timer = this.ctx.clock.after(timeout, `runner ${this.name} graceful stop timeout`, () => {
      if (this.state !== 'busy') return;
      this.ctx.log('runner', 'Graceful stop timed out; SIGINT to the worker', {
        runner: this.name,
      });
      this.draining = false;
      this.shutdownSignal();
    });
  }

  /** The runner's own shutdown: a busy runner fails its job and exits shortly after. */
  private shutdownSignal(): void {
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
