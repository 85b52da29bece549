/**
 * Cluster facts: the parts of Kubernetes objects, Kubernetes events and EC2 events that the
 * domain reads. Timestamps are epoch milliseconds (null when absent or unparseable).
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace: string;
  uid: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ownerReferences: OwnerReference[];
  finalizers: string[];
  creationTimestamp: number | null;
  deletionTimestamp: number | null;
}

export interface Condition {
  type: string;
  status: string;
  reason: string | null;
  message: string | null;
  lastTransitionTime: number | null;
}

export interface ContainerStatus {
  name: string;
  /** Set when the container has terminated. */
  terminated: { reason: string | null; exitCode: number; message: string | null } | null;
}

export interface Pod {
  cluster: string;
  metadata: ObjectMeta;
  nodeName: string | null;
  /** The image of ARC's `runner` container (its tag is the runner version), when known. */
  runnerImage?: string | null;
  phase: string | null;
  reason: string | null;
  message: string | null;
  conditions: Condition[];
  containerStatuses: ContainerStatus[];
  initContainerStatuses: ContainerStatus[];
}

/** One entry of `status.failures`: a bool (ARC ≤ 0.11) or a time (ARC ≥ 0.12) per pod uid. */
export interface RunnerFailure {
  podUid: string;
  at: number | null;
}

/** The job fields ARC's listener writes onto an EphemeralRunner on JobStarted. */
export interface EphemeralRunnerJobFields {
  /** ARC ≥ 0.13: the Actions service job GUID. Not the REST job id. */
  jobId: string | null;
  jobRequestId: number | null;
  /** `owner/repo` */
  jobRepositoryName: string | null;
  jobWorkflowRef: string | null;
  workflowRunId: number | null;
  jobDisplayName: string | null;
}

export interface EphemeralRunner {
  cluster: string;
  metadata: ObjectMeta;
  phase: string | null;
  reason: string | null;
  message: string | null;
  ready: boolean;
  runnerId: number | null;
  runnerName: string | null;
  failures: RunnerFailure[];
  /** `bool` for ARC ≤ 0.11, `time` for ARC ≥ 0.12, `none` when the map is empty or absent. */
  failuresShape: 'bool' | 'time' | 'none';
  job: EphemeralRunnerJobFields;
}

interface Taint {
  key: string;
  value: string | null;
  effect: string;
}

export interface Node {
  cluster: string;
  name: string;
  uid: string;
  labels: Record<string, string>;
  providerID: string | null;
  /** EC2 instance id parsed from `providerID` (`aws:///eu-west-1a/i-0abc…`). */
  instanceId: string | null;
  conditions: Condition[];
  taints: Taint[];
  unschedulable: boolean;
  deletionTimestamp: number | null;
}

interface InvolvedObject {
  kind: string;
  namespace: string | null;
  name: string;
  uid: string | null;
  apiVersion: string | null;
  fieldPath: string | null;
  /** Enriched by kubernetes-event-exporter's lookup; empty when it is off. */
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ownerReferences: OwnerReference[];
  deleted: boolean;
}

export interface KubeEvent {
  cluster: string;
  name: string | null;
  namespace: string | null;
  uid: string | null;
  reason: string;
  message: string;
  type: string | null;
  sourceComponent: string | null;
  sourceHost: string | null;
  reportingComponent: string | null;
  /** The Event's own annotations (the kubelet puts `offending_containers` here). */
  annotations: Record<string, string>;
  involvedObject: InvolvedObject;
  count: number;
  /** lastTimestamp, else eventTime, else firstTimestamp, else creationTimestamp. */
  at: number | null;
}

interface Ec2SpotInterruptionWarning {
  kind: 'ec2-spot-interruption-warning';
  instanceId: string;
  instanceAction: string;
  region: string | null;
  account: string | null;
  at: number | null;
}

interface Ec2InstanceStateChange {
  kind: 'ec2-instance-state-change';
  instanceId: string;
  state: string;
  region: string | null;
  account: string | null;
  at: number | null;
}

export type Ec2Event = Ec2SpotInterruptionWarning | Ec2InstanceStateChange;
