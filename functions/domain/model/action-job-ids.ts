import type { Action } from './action.js';

/**
 * The jobs an action acts on: a run's dead or killed jobs (`jobIds`), or the one job a per-job
 * re-run names (`jobId`); none for an action on a runner, a node or a registration.
 */
export function actionJobIds(target: Action['target']): number[] {
  if ('jobIds' in target) return target.jobIds;
  if ('jobId' in target) return [target.jobId];
  return [];
}
