/** Builders of raw Kubernetes/EC2/GitHub inputs, shaped as the real APIs send them. */

export const CLUSTER = 'prod-eu';
export const NS = 'arc-runners';
export const SCALE_SET = 'arc-runner-set';
export const T0 = Date.parse('2026-12-02T10:00:00Z');
export const iso = (ms: number): string => new Date(ms).toISOString();

export function runnerLabels(scaleSet = SCALE_SET, version = '0.8.2'): Record<string, string> {
  return {
    'actions-ephemeral-runner': 'True',
    'actions.github.com/organization': 'acme',
    'actions.github.com/scale-set-name': scaleSet,
    'actions.github.com/scale-set-namespace': NS,
    'app.kubernetes.io/component': 'runner',
    'app.kubernetes.io/part-of': 'gha-runner-scale-set',
    'app.kubernetes.io/version': version,
    'pod-template-hash': '7484468bf7',
  };
}

export const erOwner = (name: string) => ({
  apiVersion: 'actions.github.com/v1alpha1',
  kind: 'EphemeralRunner',
  name,
  uid: `uid-er-${name}`,
  controller: true,
  blockOwnerDeletion: true,
});

export interface RawPodOptions {
  name?: string;
  phase?: string;
  reason?: string;
  message?: string;
  nodeName?: string;
  conditions?: object[];
  containerStatuses?: object[];
  labels?: Record<string, string>;
  ownerReferences?: object[];
  deletionTimestamp?: string;
  version?: string;
}

export function rawPod(o: RawPodOptions = {}) {
  const name = o.name ?? 'arc-runner-set-2fh9q-runner-tkvlz';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NS,
      uid: `uid-pod-${name}`,
      labels: o.labels ?? runnerLabels(SCALE_SET, o.version),
      annotations: { 'actions.github.com/runner-group-name': 'Default' },
      ownerReferences: o.ownerReferences ?? [erOwner(name)],
      creationTimestamp: iso(T0 - 60_000),
      ...(o.deletionTimestamp ? { deletionTimestamp: o.deletionTimestamp } : {}),
    },
    spec: { nodeName: o.nodeName ?? 'pool-github-runners-3-ogny9', restartPolicy: 'Never' },
    status: {
      phase: o.phase ?? 'Running',
      ...(o.reason ? { reason: o.reason } : {}),
      ...(o.message ? { message: o.message } : {}),
      conditions: o.conditions ?? [],
      containerStatuses: o.containerStatuses ?? [],
    },
  };
}

export interface RawErOptions {
  name?: string;
  phase?: string;
  reason?: string;
  failures?: Record<string, boolean | string>;
  job?: {
    jobId?: string;
    jobRepositoryName: string;
    workflowRunId: number;
    jobDisplayName: string;
  };
  version?: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  ownerKind?: string;
}

export function rawEr(o: RawErOptions = {}) {
  const name = o.name ?? 'arc-runner-set-2fh9q-runner-tkvlz';
  return {
    apiVersion: 'actions.github.com/v1alpha1',
    kind: 'EphemeralRunner',
    metadata: {
      name,
      namespace: NS,
      uid: `uid-er-${name}`,
      labels: { ...runnerLabels(SCALE_SET, o.version) },
      finalizers: o.finalizers ?? ['ephemeralrunner.actions.github.com/finalizer'],
      ownerReferences: [
        {
          apiVersion: 'actions.github.com/v1alpha1',
          kind: o.ownerKind ?? 'EphemeralRunnerSet',
          name: 'arc-runner-set-2fh9q',
          uid: 'uid-ers',
          controller: true,
        },
      ],
      creationTimestamp: iso(T0 - 120_000),
      ...(o.deletionTimestamp ? { deletionTimestamp: o.deletionTimestamp } : {}),
    },
    spec: { githubConfigUrl: 'https://github.com/acme', runnerScaleSetId: 1 },
    status: {
      ready: false,
      ...(o.phase ? { phase: o.phase } : {}),
      ...(o.reason ? { reason: o.reason } : {}),
      runnerId: 42,
      runnerName: name,
      ...(o.failures ? { failures: o.failures } : {}),
      ...(o.job ? { ...o.job, jobRequestId: 7 } : {}),
    },
  };
}

export function rawNode(
  o: {
    name?: string;
    ready?: string;
    taints?: object[];
    deletionTimestamp?: string;
  } = {},
) {
  return {
    metadata: {
      name: o.name ?? 'pool-github-runners-3-ogny9',
      uid: 'uid-node',
      labels: { 'karpenter.sh/nodepool': 'runners' },
      ...(o.deletionTimestamp ? { deletionTimestamp: o.deletionTimestamp } : {}),
    },
    spec: {
      providerID: 'aws:///eu-west-1a/i-0123456789abcdef0',
      taints: o.taints ?? [],
    },
    status: {
      conditions: [
        {
          type: 'Ready',
          status: o.ready ?? 'True',
          reason: o.ready === 'True' || !o.ready ? 'KubeletReady' : 'NodeStatusUnknown',
          lastTransitionTime: iso(T0),
        },
      ],
    },
  };
}

/** kubernetes-event-exporter's default EventBridge `detail` (EnhancedEvent.ToJSON()). */
export function exportedEvent(o: {
  reason: string;
  message: string;
  component?: string;
  kind?: string;
  name?: string;
  labels?: Record<string, string>;
  ownerReferences?: object[];
  annotations?: Record<string, string>;
  at?: number;
  host?: string;
}) {
  const name = o.name ?? 'arc-runner-set-2fh9q-runner-tkvlz';
  const kind = o.kind ?? 'Pod';
  return {
    metadata: {
      name: `${name}.17a2b3c4d5e6f7`,
      namespace: kind === 'Pod' ? NS : 'default',
      uid: 'uid-event',
      resourceVersion: '123',
      creationTimestamp: iso(o.at ?? T0),
      ...(o.annotations ? { annotations: o.annotations } : {}),
    },
    reason: o.reason,
    message: o.message,
    source: { component: o.component ?? 'kubelet', ...(o.host ? { host: o.host } : {}) },
    firstTimestamp: iso(o.at ?? T0),
    lastTimestamp: iso(o.at ?? T0),
    count: 1,
    type: 'Warning',
    eventTime: null,
    reportingComponent: o.component ?? 'kubelet',
    reportingInstance: '',
    involvedObject: {
      kind,
      ...(kind === 'Pod' ? { namespace: NS } : {}),
      name,
      uid: kind === 'Pod' ? `uid-pod-${name}` : 'uid-node',
      apiVersion: 'v1',
      resourceVersion: '456',
      labels: o.labels ?? (kind === 'Pod' ? runnerLabels() : {}),
      ownerReferences: o.ownerReferences ?? (kind === 'Pod' ? [erOwner(name)] : []),
      deleted: false,
    },
    clusterName: CLUSTER,
  };
}

export const envelope = (detail: unknown) => ({
  version: '0',
  id: 'b4a9d0a4-0000-4000-8000-000000000001',
  'detail-type': 'k8s-event',
  source: 'k8s.events',
  account: '123456789012',
  time: iso(T0),
  region: 'eu-west-1',
  resources: [],
  detail,
});

export const SHUTDOWN_ANNOTATION =
  'The runner has received a shutdown signal. This can happen when the runner service is stopped, or a manually started runner is canceled.';
export const LOST_ANNOTATION =
  'The self-hosted runner: arc-runner-set-2fh9q-runner-tkvlz lost communication with the server. Verify the machine is running and has a healthy network connection. Anything in your workflow that terminates the runner process, starves it for CPU/Memory, or blocks its network access can cause this error.';

export function without<T extends object, K extends keyof T>(obj: T, key: K): Omit<T, K> {
  const copy = { ...obj };
  delete copy[key];
  return copy;
}
