import type { SimClock } from '../../sim/clock.js';
import type { GitHubSim } from '../../sim/github/github-sim.js';

/** A fault that follows one job across attempts (`onAttempts` in the scenario). */
interface PerAttempt {
  job: string;
  attempts: readonly number[];
  /** Seconds after the attempt started on its runner. */
  after: number;
  label: string;
}

/**
 * Fires `fire` once per listed attempt of each job of that name, `after` seconds once the
 * attempt is in progress on a runner, if it still is by then (`skipped` says when it is not).
 */
export function onEachAttempt(
  github: GitHubSim,
  clock: SimClock,
  want: PerAttempt,
  fire: () => Promise<void>,
  skipped: (why: string) => void,
): void {
  const armed = new Set<number>();
  github.on((event) => {
    if (event.type !== 'workflow_job' || event.action !== 'in_progress') return;
    const { job } = event;
    if (job.name !== want.job || !want.attempts.includes(job.runAttempt) || armed.has(job.id))
      return;
    armed.add(job.id);
    clock.after(want.after * 1000, `${want.label} on ${job.name} #${job.runAttempt}`, async () => {
      if (github.job(job.id)?.status === 'in_progress') return fire();
      skipped(`job ${job.name} #${job.runAttempt} no longer in progress`);
      return undefined;
    });
  });
}
