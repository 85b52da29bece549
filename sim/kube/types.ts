/**
 * JSON shapes of the Kubernetes objects the twin stores. They are plain JSON (timestamps are
 * RFC 3339 strings), unlike @kubernetes/client-node's model classes.
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastProbeTime?: string | null;
  lastHeartbeatTime?: string;
}

interface ContainerState {
  waiting?: { reason?: string; message?: string };
  running?: { startedAt: string };
  terminated?: {
    exitCode: number;
    reason?: string;
    message?: string;
    startedAt?: string;
    finishedAt?: string;
    containerID?: string;
  };
}

export interface ContainerStatus {
  name: string;
  state: ContainerState;
  lastState?: ContainerState;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  started?: boolean;
}

interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  [key: string]: unknown;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  nodeName?: string;
  restartPolicy?: string;
  terminationGracePeriodSeconds?: number;
  tolerations?: Toleration[];
  nodeSelector?: Record<string, string>;
  [key: string]: unknown;
}

interface PodStatus {
  phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
  reason?: string;
  message?: string;
  conditions?: Condition[];
  containerStatuses?: ContainerStatus[];
  hostIP?: string;
  podIP?: string;
  startTime?: string;
  qosClass?: string;
  [key: string]: unknown;
}

export interface Pod extends KubeObject {
  spec: PodSpec;
  status?: PodStatus;
}

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  timeAdded?: string;
}

export interface Node extends KubeObject {
  spec: { providerID?: string; unschedulable?: boolean; taints?: Taint[]; [key: string]: unknown };
  status?: {
    conditions?: Condition[];
    allocatable?: Record<string, string>;
    capacity?: Record<string, string>;
    nodeInfo?: Record<string, string>;
    addresses?: { type: string; address: string }[];
    [key: string]: unknown;
  };
}

interface ObjectReference {
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
  apiVersion?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface CoreEvent extends KubeObject {
  involvedObject: ObjectReference;
  reason: string;
  message: string;
  type: 'Normal' | 'Warning';
  source: { component?: string; host?: string };
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  eventTime: string | null;
  reportingComponent: string;
  reportingInstance: string;
}

export interface EphemeralRunnerStatus {
  ready?: boolean;
  phase?: string;
  reason?: string;
  message?: string;
  runnerId?: number;
  runnerName?: string;
  runnerJITConfig?: string;
  failures?: Record<string, string | boolean>;
  jobRequestId?: number;
  jobId?: string;
  jobRepositoryName?: string;
  jobWorkflowRef?: string;
  workflowRunId?: number;
  jobDisplayName?: string;
}

export interface EphemeralRunner extends KubeObject {
  spec: {
    githubConfigUrl: string;
    githubConfigSecret: string;
    runnerScaleSetId: number;
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec: PodSpec;
    [key: string]: unknown;
  };
  status?: EphemeralRunnerStatus;
}

export interface EphemeralRunnerSet extends KubeObject {
  spec: {
    replicas?: number;
    patchID: number;
    ephemeralRunnerSpec: EphemeralRunner['spec'];
    [key: string]: unknown;
  };
  status?: {
    currentReplicas?: number;
    pendingEphemeralRunners?: number;
    runningEphemeralRunners?: number;
    failedEphemeralRunners?: number;
    phase?: string;
  };
}

export interface AutoscalingRunnerSet extends KubeObject {
  spec: {
    githubConfigUrl: string;
    githubConfigSecret: string;
    runnerGroup?: string;
    runnerScaleSetName?: string;
    minRunners?: number;
    maxRunners?: number;
    template: { metadata?: ObjectMeta; spec: PodSpec };
    [key: string]: unknown;
  };
  status?: {
    currentRunners?: number;
    phase?: string;
    pendingEphemeralRunners?: number;
    runningEphemeralRunners?: number;
    failedEphemeralRunners?: number;
  };
}

export function isoTime(ms: number): string {
  // Kubernetes serialises metav1.Time at second precision.
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * Copies JSON data as a JSON round trip would (objects here are always JSON): an undefined or
 * function property is left out, one in an array becomes null, as does a number JSON cannot
 * write, and a value with toJSON (a Date) is written by it. About four times faster than the
 * round trip, which was the twins' largest single cost in a scenario play.
 */
export function deepClone<T>(value: T): T {
  return value === undefined ? value : (copyJson(value) as T);
}

function copyJson(value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'object' || value === null) return value;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return JSON.parse(JSON.stringify(value)) as unknown;
  if (Array.isArray(value))
    return value.map((item: unknown) =>
      item === undefined || typeof item === 'function' ? null : copyJson(item),
    );
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value))
    if (item !== undefined && typeof item !== 'function') copy[key] = copyJson(item);
  return copy;
}
