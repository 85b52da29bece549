import type { EphemeralRunnerJobFields } from '../model/cluster-facts.js';
import { runKey, type Correlation } from './correlation.js';
import type { JobRecord } from '../model/facts.js';
import { isProvenArcRunner } from './runner-guard.js';
import { emptyRunnerView, type RunnerView } from './runner-view.js';

/**
 * A job matches an EphemeralRunner's job fields by repo + run id, and by runner name, or by display
 * name when the job never named its runner. The ER `jobId` is a GUID, never the REST job id, and
 * `jobRequestId` is the Actions service's runner request id, which no GitHub job field carries.
 */
export function matchesErFields(j: JobRecord, name: string, f: EphemeralRunnerJobFields): boolean {
  return (
    f.jobRepositoryName === j.repository.fullName &&
    f.workflowRunId === j.job.runId &&
    (j.job.runnerName === name || (j.job.runnerName === null && j.job.name === f.jobDisplayName))
  );
}

/** Whether what runner-medic sees of a runner view proves it an ARC runner (runner-guard.ts). */
const isProvenArcView = (v: RunnerView): boolean => v.arcOwned && isProvenArcRunner(v);

const only = <T>(xs: readonly T[]): T | null => (xs.length === 1 ? (xs[0] ?? null) : null);

type JoinIndex = Pick<Correlation, 'byName' | 'byRunnerId' | 'byErRun'>;

/**
 * The runner view a job ran on, joined by identity, never by name alone:
 * 1. GitHub's `runner_id` is the EphemeralRunner's `status.runnerId` (and the names agree);
 * 2. else the EphemeralRunner's job fields name the job's repository, run and runner;
 * 3. else, by name, only when exactly one runner view (cluster, namespace, name) of that name is
 *    proven ARC's. A look-alike of the same name elsewhere makes the name ambiguous: no runner.
 * A view whose runner id is known and is another runner's is never the job's. Each step that
 * finds more than one candidate gives no runner: acting on the wrong one is worse than waiting.
 */
export function jobRunnerView(c: JoinIndex, job: JobRecord): RunnerView | null {
  const { runnerId, runnerName } = job.job;
  const fieldsMatch = (v: RunnerView) =>
    v.jobFields !== null && matchesErFields(job, v.name, v.jobFields);
  if (runnerId !== null) {
    const byId = (c.byRunnerId.get(runnerId) ?? []).filter(
      (v) => runnerName === null || v.name === runnerName,
    );
    if (byId.length > 0) return only(byId) ?? only(byId.filter(fieldsMatch));
  }
  const notAnother = (v: RunnerView) =>
    runnerId === null || v.runnerId === null || v.runnerId === runnerId;
  const byFields = (c.byErRun.get(runKey(job.repository.fullName, job.job.runId)) ?? []).filter(
    (v) => notAnother(v) && fieldsMatch(v),
  );
  if (byFields.length > 0) return only(byFields);
  if (runnerName === null) return null;
  return only((c.byName.get(runnerName) ?? []).filter((v) => notAnother(v) && isProvenArcView(v)));
}

/** Runners whose scale set serves this job (`runs-on` labels hold the scale-set name). */
export function runnersForJob(c: Correlation, job: JobRecord): RunnerView[] {
  return job.job.labels.flatMap((l) => c.byScaleSet.get(l.toLowerCase()) ?? []);
}

/** Runners with a pod on the node with this EC2 instance id (through `spec.providerID`). */
export function runnersOnInstance(c: Correlation, instanceId: string): RunnerView[] {
  return c.runners.filter((v) => v.node?.instanceId === instanceId);
}

/** `arc-runner-set-2fh9q-runner-tkvlz` → `arc-runner-set-2fh9q` (its EphemeralRunnerSet). */
export function runnerSetPrefix(name: string): string | null {
  const m = /^(.+)-runner-[a-z0-9]+$/.exec(name);
  return m?.[1] ?? null;
}

/**
 * The ARC runner a job ran on, if runner-medic knows it: by identity (`jobRunnerView`), or, when
 * nothing of a runner of that name was seen anywhere, by the proven runners of the same
 * EphemeralRunnerSet (name prefix) whose scale set is among the job's labels, when they all sit
 * in one cluster and namespace. That last view has no objects and no loss.
 */
export function runnerOfJob(c: Correlation, job: JobRecord): RunnerView | null {
  const found = jobRunnerView(c, job);
  const name = job.job.runnerName;
  if (found || !name || c.byName.has(name)) return found;
  const prefix = runnerSetPrefix(name);
  if (prefix === null) return null;
  const labels = job.job.labels.map((l) => l.toLowerCase());
  const kin = c.runners.filter(
    (v) =>
      isProvenArcView(v) &&
      runnerSetPrefix(v.name) === prefix &&
      v.scaleSet !== null &&
      labels.includes(v.scaleSet.toLowerCase()),
  );
  const first = kin[0];
  if (!first || kin.some((v) => v.cluster !== first.cluster || v.namespace !== first.namespace))
    return null;
  return {
    ...emptyRunnerView(first.cluster, first.namespace, name),
    scaleSet: first.scaleSet,
    arcOwned: first.arcOwned,
    legacyArc: first.legacyArc,
    arcDeletesKilled: first.arcDeletesKilled,
    runnerId: job.job.runnerId,
    jobs: [job],
    busy: true,
  };
}
