import type { Correlation } from './correlate.js';
import type { EphemeralRunnerJobFields } from './cluster-facts.js';
import type { JobRecord } from './facts.js';
import type { RunnerView } from './runner-view.js';

/**
 * A job matches an EphemeralRunner's job fields by repo + run id, and by runner name, or by display
 * name when the job never named its runner. The ER `jobId` is a GUID, never the REST job id.
 */
export function matchesErFields(j: JobRecord, name: string, f: EphemeralRunnerJobFields): boolean {
  return (
    f.jobRepositoryName === j.repository.fullName &&
    f.workflowRunId === j.job.runId &&
    (j.job.runnerName === name || (j.job.runnerName === null && j.job.name === f.jobDisplayName))
  );
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
 * The ARC runner a job ran on, if runner-medic knows it: by name, by ER job fields, or, when
 * nothing of the runner itself was seen, by a known runner of the same EphemeralRunnerSet (name
 * prefix) whose scale set is among the job's labels. That last view has no objects and no loss.
 */
export function runnerOfJob(c: Correlation, job: JobRecord): RunnerView | null {
  const name = job.job.runnerName;
  const direct = name ? (c.byName.get(name) ?? []) : [];
  const found =
    direct[0] ??
    c.runners.find((v) => v.jobFields !== null && matchesErFields(job, v.name, v.jobFields));
  if (found || !name) return found ?? null;
  const prefix = runnerSetPrefix(name);
  const labels = job.job.labels.map((l) => l.toLowerCase());
  const kin = c.runners.find(
    (v) =>
      v.arcOwned &&
      prefix !== null &&
      runnerSetPrefix(v.name) === prefix &&
      v.scaleSet !== null &&
      labels.includes(v.scaleSet.toLowerCase()),
  );
  if (!kin) return null;
  return {
    ...kin,
    name,
    pod: null,
    er: null,
    node: null,
    nodeName: null,
    podMissingSince: null,
    jobFields: null,
    jobSeenAt: null,
    arcWontRecover: false,
    runnerId: job.job.runnerId,
    jobs: [job],
    busy: true,
    losses: [],
    loss: null,
    lostAt: null,
    nodeSignals: [],
    warnings: [],
  };
}
