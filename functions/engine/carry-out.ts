import type { Action, ActionOutcome, RunRef } from '../domain/model/action.js';
import type { ClusterGateways, ClusterMutation } from '../ports/cluster-gateway.js';
import { RunnerMedicError } from '../ports/errors.js';
import type {
  AttemptPrecondition,
  GithubGateway,
  GithubMutation,
} from '../ports/github-gateway.js';

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
        return fromGithub(
          await github.rerunFailedJobs(t, { ...attemptOf(t), killedJobs: t.jobIds }),
        );
      case 'rerun-job':
        return fromGithub(await github.rerunJob(t, t.jobId, attemptOf(t)));
      case 'cancel-run':
        return fromGithub(await github.cancelRun(t, cancelPrecondition(t)));
      case 'force-cancel-run':
        return fromGithub(await github.forceCancelRun(t, cancelPrecondition(t)));
      case 'report-deprecated-runner':
        return await deprecationReport(t, github);
      case 'delete-runner-registration':
        return fromGithub(await github.deleteRunner(t.owner, t.installationId, t.runnerId));
      default:
        return { outcome: 'succeeded', detail: 'recorded' };
    }
  } catch (error) {
    return fromFailure(error);
  }
}

/**
 * An API that was unavailable fails the action (the invocation is retried); a refusal no retry
 * will change (RBAC, validation, a cluster that is not configured) gives it up; anything else
 * (a bad response, a bug, runner-medic set up wrongly) is thrown.
 */
function fromFailure(error: unknown): CarriedOut {
  if (!(error instanceof RunnerMedicError)) throw error;
  switch (error.kind) {
    case 'unavailable':
      return { outcome: 'failed', detail: error.message, error };
    case 'refused':
      return { outcome: 'gave-up', detail: `${error.name}: ${error.message}` };
    case 'bad-response':
    case 'config':
    case 'bug':
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

/** A cancel also waits on its jobs: still in progress, and (by default) no other job running. */
const cancelPrecondition = (
  t: RunRef & { jobIds: number[]; allowLiveJobs: boolean },
): AttemptPrecondition => ({
  ...attemptOf(t),
  jobs: { inProgress: t.jobIds, allowLiveJobs: t.allowLiveJobs },
});

const iso = (ms: number | null) => (ms === null ? 'not announced' : new Date(ms).toISOString());

/**
 * A runner that exits 0 without a job: say when GitHub stops its version, from
 * `GET /actions/runners/deprecations/{version}`. The report stands without a version (or when
 * GitHub cannot be asked): the cycling itself is worth telling.
 */
async function deprecationReport(
  t: Extract<Action['target'], { kind: 'report-deprecated-runner' }>,
  github: GithubGateway,
): Promise<CarriedOut> {
  const seen = `runners of ${t.cluster}/${t.namespace}/${t.scaleSet} exit 0 without taking a job (${t.evidence})`;
  if (t.version === null)
    return { outcome: 'succeeded', detail: `${seen}; runner version unknown` };
  if (t.owner === null)
    return {
      outcome: 'succeeded',
      detail: `${seen}; runner version ${t.version}; no App installation known to ask GitHub when it stops working`,
    };
  let dates: Awaited<ReturnType<GithubGateway['runnerVersionDeprecation']>>;
  try {
    dates = await github.runnerVersionDeprecation(t.version, t.owner, t.installationId);
  } catch (error) {
    return {
      outcome: 'succeeded',
      detail: `${seen}; runner version ${t.version}; GitHub's deprecation dates could not be read (${(error as Error).message})`,
    };
  }
  if (!dates || (dates.runtimeDeprecatesAt === null && dates.registrationDeprecatesAt === null))
    return {
      outcome: 'succeeded',
      detail: `${seen}; GitHub names no deprecation for runner version ${t.version}`,
    };
  return {
    outcome: 'succeeded',
    detail: `${seen}; runner version ${t.version} is deprecated: it stops running jobs at ${iso(dates.runtimeDeprecatesAt)} and stops registering at ${iso(dates.registrationDeprecatesAt)}; upgrade the runner image`,
  };
}

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
    case 'try-again':
      return { outcome: 'retry-later', detail: result.message };
    case 'refused':
    case 'conflict':
    case 'not-found':
      return { outcome: 'gave-up', detail: `${result.result}: ${result.message}` };
  }
}
