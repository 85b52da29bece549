import type { Action, ActionOutcome, RunRef } from '../domain/action.js';
import { ClusterUnavailableError } from '../ports/cluster-gateway.js';
import type { ClusterGateways, ClusterMutation } from '../ports/cluster-gateway.js';
import { GithubUnavailableError } from '../ports/github-gateway.js';
import type { GithubGateway, GithubMutation } from '../ports/github-gateway.js';

/** Refusals no retry will change (RBAC, validation, a cluster that is not configured). */
const REFUSALS = new Set(['ClusterRequestError', 'UnknownClusterError', 'GithubRequestError']);

export interface CarriedOut {
  outcome: ActionOutcome;
  detail: string;
  /** Set when an API was unavailable: the invocation should fail so that it is retried. */
  error?: Error;
}

/** Performs one mutating action against the API it targets and names the outcome. */
export async function carryOut(
  action: Action,
  clusters: ClusterGateways,
  github: GithubGateway,
): Promise<CarriedOut> {
  const t = action.target;
  try {
    switch (t.kind) {
      case 'delete-ephemeral-runner': {
        const gw = await clusters.forCluster(t.cluster);
        return fromCluster(await gw.deleteEphemeralRunner(t.namespace, t.name, t.uid));
      }
      case 'delete-pod': {
        const gw = await clusters.forCluster(t.cluster);
        return fromCluster(await gw.deletePod(t.namespace, t.name, t.uid, t.force));
      }
      case 'remove-finalizer': {
        const gw = await clusters.forCluster(t.cluster);
        return fromCluster(await gw.removeFinalizers(t.namespace, t.name, t.uid, t.finalizers));
      }
      case 'rerun-failed-jobs':
        return fromGithub(await github.rerunFailedJobs(t, attemptOf(t)));
      case 'rerun-job':
        return fromGithub(await github.rerunJob(t, t.jobId, attemptOf(t)));
      case 'cancel-run':
        return fromGithub(await github.cancelRun(t, attemptOf(t)));
      case 'force-cancel-run':
        return fromGithub(await github.forceCancelRun(t, attemptOf(t)));
      case 'delete-runner-registration':
        return fromGithub(await github.deleteRunner(t.owner, t.installationId, t.runnerId));
      default:
        return { outcome: 'succeeded', detail: 'recorded' };
    }
  } catch (error) {
    if (error instanceof ClusterUnavailableError || error instanceof GithubUnavailableError) {
      return { outcome: 'failed', detail: error.message, error };
    }
    if (error instanceof Error && REFUSALS.has(error.name)) {
      return { outcome: 'gave-up', detail: `${error.name}: ${error.message}` };
    }
    throw error;
  }
}

function fromCluster(result: ClusterMutation): CarriedOut {
  return result === 'done'
    ? { outcome: 'succeeded', detail: 'done' }
    : { outcome: 'succeeded', detail: 'already gone, or replaced by a fresh object (left alone)' };
}

/** The attempt the action was decided for: GitHub is asked only while the run is still on it. */
const attemptOf = (t: RunRef) => ({ runId: t.runId, runAttempt: t.runAttempt });

function fromGithub(result: GithubMutation): CarriedOut {
  switch (result.result) {
    case 'done':
      return { outcome: 'succeeded', detail: 'done' };
    case 'unknown':
      return { outcome: 'unknown', detail: result.message };
    case 'moved-on':
      return { outcome: 'gave-up', detail: `moved-on: ${result.message}` };
    case 'already-running':
    case 'busy':
      return { outcome: 'retry-later', detail: result.message };
    case 'refused':
    case 'conflict':
    case 'not-found':
      return { outcome: 'gave-up', detail: `${result.result}: ${result.message}` };
  }
}
