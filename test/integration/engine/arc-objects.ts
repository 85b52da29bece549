import type { JobRecord } from '../../../functions/domain/model/facts.js';
import type { EngineHarness } from './engine-harness.js';

export const NS = 'arc-runners';
export const SET = 'arc-linux';

type Owner = { metadata: Record<string, unknown> };

/** Labels ARC puts on a scale set's objects (`component` differs per kind). */
function arcLabels(component: string): Record<string, string> {
  return {
    'app.kubernetes.io/component': component,
    'app.kubernetes.io/part-of': 'gha-runner-scale-set',
    'app.kubernetes.io/version': '0.13.0',
    'actions.github.com/scale-set-name': SET,
    'actions.github.com/scale-set-namespace': NS,
  };
}

const runnerSpec = {
  githubConfigUrl: 'https://github.com/acme',
  githubConfigSecret: 's',
  runnerScaleSetId: 1,
  spec: { containers: [{ name: 'runner', image: 'runner' }] },
};

const controlledBy = (kind: string, owner: Owner) => [
  {
    apiVersion: 'actions.github.com/v1alpha1',
    kind,
    name: String(owner.metadata.name),
    uid: String(owner.metadata.uid),
    controller: true,
    blockOwnerDeletion: true,
  },
];

export function seedRunnerSet(harness: EngineHarness): Owner {
  return harness.kube.api.create('arc', 'ephemeralrunnersets', NS, {
    apiVersion: 'actions.github.com/v1alpha1',
    kind: 'EphemeralRunnerSet',
    metadata: { name: `${SET}-x7k2p`, namespace: NS, labels: arcLabels('runner-set') },
    spec: { replicas: 1, patchID: 0, ephemeralRunnerSpec: runnerSpec },
  });
}

/** An EphemeralRunner as ARC creates it, with the status its controller (or listener) wrote, and optionally its pod. */
export function seedRunner(
  harness: EngineHarness,
  set: Owner,
  name: string,
  status: Record<string, unknown>,
  options: { withPod?: boolean } = {},
): void {
  const er = harness.kube.api.create('arc', 'ephemeralrunners', NS, {
    apiVersion: 'actions.github.com/v1alpha1',
    kind: 'EphemeralRunner',
    metadata: {
      name,
      namespace: NS,
      labels: arcLabels('runner'),
      ownerReferences: controlledBy('EphemeralRunnerSet', set),
    },
    spec: runnerSpec,
  });
  if (options.withPod) {
    harness.kube.api.create('arc', 'pods', NS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: NS,
        labels: { ...arcLabels('runner'), 'actions-ephemeral-runner': 'True' },
        ownerReferences: controlledBy('EphemeralRunner', er),
      },
      spec: { nodeName: 'ip-10-0-1-17', containers: [{ name: 'runner', image: 'runner' }] },
    });
  }
  harness.kube.api.modify('arc', 'ephemeralrunners', NS, name, (o) => void (o.status = status), {
    subresource: 'status',
  });
}

/** A successful job of acme/app on the scale set, as its `completed` webhook tells the store. */
export function completedJob(o: {
  jobId: number;
  runId: number;
  runnerId: number;
  runnerName: string;
  installationId: number | null;
  createdAt: number;
  startedAt: number;
  completedAt: number;
}): JobRecord {
  return {
    repository: { id: 1, fullName: 'acme/app', owner: 'acme', name: 'app' },
    installationId: o.installationId,
    annotations: null,
    job: {
      jobId: o.jobId,
      runId: o.runId,
      runAttempt: 1,
      name: 'build',
      workflowName: 'ci',
      headBranch: 'main',
      labels: [SET],
      status: 'completed',
      conclusion: 'success',
      runnerId: o.runnerId,
      runnerName: o.runnerName,
      runnerGroupId: 1,
      runnerGroupName: 'Default',
      htmlUrl: `https://github.com/acme/app/actions/runs/${o.runId}/job/${o.jobId}`,
      createdAt: new Date(o.createdAt).toISOString(),
      startedAt: new Date(o.startedAt).toISOString(),
      completedAt: new Date(o.completedAt).toISOString(),
    },
  };
}
