import * as z from 'zod';

/** Why a runner was lost, which signal said so, and warnings that a node is about to go. */

/**
 * Every kind of loss, the one list: from the most telling to the least (a runner's main loss is
 * the first of its losses in this order), and what a policy's `excludeCauses` may name.
 */
export const lossKindSchema = z.enum([
  'node-pressure-eviction',
  'admission-reject',
  'kubelet-shutdown',
  'oom-killed',
  'api-eviction',
  'preemption',
  'taint-manager',
  'pod-gc',
  'runner-killed',
  'node-not-ready',
  'pod-not-found',
  'runner-failed',
  'runner-stuck',
]);

export type LossKind = z.infer<typeof lossKindSchema>;

export type PressureResource = 'memory' | 'disk' | 'pid' | 'other';
type Evictor = 'karpenter' | 'node-termination-handler' | 'spot-interruption' | 'unknown';
export type KarpenterReason = 'consolidation' | 'drift' | 'expiry' | 'forceful' | 'other';

export type LossCause =
  | { kind: 'node-pressure-eviction'; resource: PressureResource; container: string | null }
  | { kind: 'admission-reject'; resource: PressureResource | null; detail: string }
  | { kind: 'api-eviction'; by: Evictor; karpenterReason: KarpenterReason | null }
  | { kind: 'preemption' }
  | { kind: 'taint-manager' }
  | { kind: 'pod-gc' }
  | { kind: 'kubelet-shutdown' }
  | { kind: 'oom-killed'; container: string }
  /**
   * The runner container was killed (SIGKILL, exit 137) with nothing else to explain it: it could
   * not tell GitHub, so its job waits for the lost-runner lock.
   */
  | { kind: 'runner-killed'; container: string; exitCode: number }
  | { kind: 'pod-not-found' }
  | { kind: 'node-not-ready' }
  /** EphemeralRunner `phase: Failed` (InvalidPod, or TooManyPodFailures in ARC ≤ 0.11). */
  | { kind: 'runner-failed'; reason: string | null }
  /**
   * The runner's one job has completed, yet its pod lives on (actions-runner-controller#4603,
   * actions-runner-controller#4588).
   */
  | { kind: 'runner-stuck' };

export type SignalSource =
  | 'pod-status'
  | 'pod-condition'
  | 'container-status'
  | 'pod-event'
  | 'node-status'
  | 'node-event'
  | 'ec2-event'
  | 'runner-status'
  | 'listing'
  | 'annotation';

/** What decided a classification, for the audit: `pod-event Evicted (kubelet): The node…`. */
export interface Signal {
  source: SignalSource;
  detail: string;
}

/** A runner (pod == EphemeralRunner == GitHub runner name) lost for a cause. */
export interface Loss {
  cluster: string;
  namespace: string;
  runnerName: string;
  podUid: string | null;
  nodeName: string | null;
  scaleSet: string | null;
  /** Whether the object passed the ARC runner guard; null when the signal carried no metadata. */
  ownedByArc: boolean | null;
  cause: LossCause;
  signal: Signal;
  /** When the signal happened (epoch ms), null when unknown. */
  at: number | null;
}

export type NodeWarningKind =
  | 'spot-interruption-warning'
  | 'karpenter-disruption'
  | 'nth-drain'
  | 'instance-terminating'
  | 'node-not-ready'
  | 'node-gone';

/** A node (by name or by EC2 instance id) that is going or gone. */
export interface NodeSignal {
  cluster: string | null;
  nodeName: string | null;
  instanceId: string | null;
  kind: NodeWarningKind;
  signal: Signal;
  at: number | null;
}

/** A warning about one runner pod (e.g. Karpenter's `SpotInterrupted` on the pod). */
export interface RunnerWarning {
  cluster: string;
  namespace: string;
  runnerName: string;
  kind: NodeWarningKind;
  signal: Signal;
  at: number | null;
}

/** Node signals that end the pods on the node now, rather than warn. */
export const NODE_DOWN_KINDS: readonly NodeWarningKind[] = ['node-not-ready', 'node-gone'];

export function describeCause(c: LossCause): string {
  switch (c.kind) {
    case 'node-pressure-eviction':
      return `node-pressure eviction (${c.resource}${c.container ? `, container ${c.container}` : ''})`;
    case 'admission-reject':
      return `admission reject (${c.detail})`;
    case 'api-eviction':
      return `API eviction by ${c.by}${c.karpenterReason ? ` (${c.karpenterReason})` : ''}`;
    case 'oom-killed':
      return `OOMKilled (container ${c.container})`;
    case 'runner-killed':
      return `killed (container ${c.container}, exit ${c.exitCode})`;
    case 'runner-failed':
      return `EphemeralRunner failed (${c.reason ?? 'no reason'})`;
    default:
      return c.kind;
  }
}
