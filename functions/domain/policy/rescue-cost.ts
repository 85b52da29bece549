import type { ActionKind } from '../model/action.js';

/** How a lost job shows itself, which decides how runner-medic rescues it. */
export type LossShape = 'graceful' | 'hard-kill' | 'hung-job';

/**
 * The mutating calls one rescue of a lost job makes on GitHub, by the shape of its loss: the one
 * definition the scenario outcome bounds every job by (budget × cost), and the docs quote.
 * - `graceful`: the runner got SIGTERM and told GitHub, which concludes the job; rule 3 re-runs it.
 * - `hard-kill`: SIGKILL or its node gone, so GitHub hears nothing; rule 4 cancels the run and
 *   force-cancels it, and rule 3 re-runs it (the fast path).
 * - `hung-job`: the fast path is not taken (a live sibling, or a refused cancel): the job hangs
 *   until GitHub's lost-runner lock fails it, then rule 3 re-runs it.
 * The re-run is `rerun-failed-jobs`, or `rerun-job` when another job of the run failed on its own.
 * The lost runner's own clean-up is per runner, not per rescue (RUNNER_CLEANUP_CALLS).
 */
export const RESCUE_CALLS: Readonly<Record<LossShape, readonly ActionKind[]>> = {
  graceful: ['rerun-failed-jobs'],
  'hard-kill': ['cancel-run', 'force-cancel-run', 'rerun-failed-jobs'],
  'hung-job': ['rerun-failed-jobs'],
};

/**
 * The most job-level mutating calls runner-medic may make for one job over all its attempts:
 * `budget` rescues, each at the cost of the costliest shape its losses took. A loss after the
 * budget is spent costs nothing: GitHub's lock or the runner's own report ends the job.
 */
export function rescueCallBound(budget: number, shapes: readonly LossShape[]): number {
  return budget * Math.max(0, ...shapes.map((s) => RESCUE_CALLS[s].length));
}

/**
 * What one lost runner's clean-up may cost, whether its job is rescued or not: each call at most
 * once. Rule 1 deletes its EphemeralRunner when ARC leaves it holding a slot, force-deletes its
 * pod on a dead node, and (by policy) strips the finalizers of one stuck deleting; rules 1 and 5
 * delete its GitHub registration when nothing else will.
 */
export const RUNNER_CLEANUP_CALLS: readonly ActionKind[] = [
  'delete-ephemeral-runner',
  'delete-pod',
  'remove-finalizer',
  'delete-runner-registration',
];

/** The most clean-up calls runner-medic may make for a job's lost runners. */
export function cleanupCallBound(lostRunners: number): number {
  return lostRunners * RUNNER_CLEANUP_CALLS.length;
}
