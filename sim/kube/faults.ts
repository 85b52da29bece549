/** The ways a runner pod dies, for tests and scenarios (each through the model that does it). */
import { ApiError } from './api/errors.js';
import type { SimCluster } from './cluster.js';
import type { EvictionSignal, PressureCondition } from './models/kubelet.js';
import type { DisruptionMethod } from './models/karpenter.js';
import type { Node, Pod } from './types.js';

export class Faults {
  constructor(private readonly cluster: SimCluster) {}

  /**
   * kubelet node-pressure eviction (memory, disk = ephemeral-storage, pid): Failed/Evicted.
   * The node keeps the pressure condition and taint for `pressureMs` (default 5 min; 0 = none).
   */
  evictForNodePressure(
    namespace: string,
    pod: string,
    signal: EvictionSignal = 'memory',
    options: { pressureMs?: number } = {},
  ): void {
    this.cluster.kubelets.evict(namespace, pod, signal, options.pressureMs);
  }

  /** kubelet admission reject: `Pod was rejected: The node had condition: [DiskPressure]. ` */
  admissionReject(
    namespace: string,
    pod: string,
    condition: PressureCondition = 'DiskPressure',
  ): void {
    this.cluster.kubelets.rejectAtAdmission(namespace, pod, condition);
  }

  /** Sets a node pressure condition; while set, the kubelet rejects new pods at admission. */
  setNodePressure(node: string, condition: PressureCondition, on: boolean): void {
    this.cluster.kubelets.setPressure(node, condition, on);
  }

  /** Graceful node shutdown: pods Failed/Terminated, runners get SIGTERM, then the node powers off. */
  gracefulNodeShutdown(node: string, shutdownGracePeriodMs?: number): void {
    this.cluster.kubelets.gracefulShutdown(node, shutdownGracePeriodMs);
  }

  /** The runner container is OOM-killed (exit 137, OOMKilled). */
  oomKill(namespace: string, pod: string): void {
    this.cluster.kubelets.oomKill(namespace, pod);
  }

  /**
   * A graceful stop of one pod: DELETE with a grace period (`kubectl delete pod
   * --grace-period=N`; default the pod's terminationGracePeriodSeconds). The kubelet sends SIGTERM,
   * the runner handles it as its scale set's `onSigterm` says, and SIGKILL follows at the end of
   * the grace period.
   */
  terminatePod(
    namespace: string,
    pod: string,
    options: { gracePeriodSeconds?: number; actor?: string } = {},
  ): void {
    this.cluster.api.delete(options.actor ?? 'scenario', 'pods', namespace, pod, {
      ...(options.gracePeriodSeconds !== undefined
        ? { gracePeriodSeconds: options.gracePeriodSeconds }
        : {}),
    });
  }

  /**
   * A hard kill of one pod's runner: SIGKILL with no grace (the container's main process killed,
   * exit 137). The runner cannot tell GitHub; its job is held by GitHub's lost-runner lock.
   */
  killPod(namespace: string, pod: string): void {
    this.cluster.kubelets.sigkill(namespace, pod);
  }

  /**
   * The node's kubelet stops reporting: Ready=Unknown after the node-monitor grace period, the
   * `unreachable` taints, pods still `Running` (not ready) until the taint manager deletes them
   * after their toleration (300 s) and they stay Terminating. Runners keep running their jobs,
   * unless `runners: 'lose-network'`.
   */
  nodeNotReady(node: string, options: { runners?: 'keep-running' | 'lose-network' } = {}): void {
    this.cluster.kubelets.stopReporting(node, options.runners);
  }

  /** Karpenter voluntary disruption; consolidation and drift honour `karpenter.sh/do-not-disrupt`. */
  karpenterDisrupt(node: string, method: DisruptionMethod): 'started' | 'blocked' {
    return this.cluster.karpenter.disrupt(node, method);
  }

  /** EC2 spot interruption of a node's instance: warning now, reclaimed 120 s later. */
  spotInterruption(node: string): void {
    const instance = this.cluster.ec2.byNode(node);
    if (!instance) throw new Error(`no instance behind node ${node}`);
    this.cluster.ec2.interruptSpot(instance.id);
    const managed = this.cluster.api.tryGet<Node>('nodes', undefined, node)?.metadata.labels?.[
      'karpenter.sh/nodepool'
    ];
    if (managed)
      this.cluster.clock.after(
        this.cluster.timings.interruptionReactionMs,
        `karpenter interruption ${node}`,
        () => this.cluster.karpenter.spotInterrupted(node),
      );
  }

  /** Terminates the instance behind a node (shutting-down, then terminated). */
  terminateInstance(node: string): void {
    const instance = this.cluster.ec2.byNode(node);
    if (!instance) throw new Error(`no instance behind node ${node}`);
    this.cluster.ec2.terminate(instance.id);
  }

  /** The Node object is deleted; its kubelet and runners are gone; PodGC later removes its pods. */
  deleteNode(node: string): void {
    this.cluster.kubelets.nodeDown(node);
    this.cluster.api.delete('scenario', 'nodes', undefined, node);
  }

  /** The machine loses power: no status updates; the node goes NotReady/Unknown. */
  powerOffNode(node: string): void {
    this.cluster.kubelets.nodeDown(node);
  }

  /**
   * An admission webhook (or Pod Security) denies runner pod creation with 403 Forbidden while
   * `predicate` holds; ARC >= 0.13 marks the EphemeralRunner Failed with reason InvalidPod.
   */
  denyPodCreation(
    predicate: ((pod: Pod) => boolean) | undefined,
    webhook = 'policy.example.com',
    reason = 'runner pods must not run privileged',
  ): void {
    this.cluster.api.admissionGuard = predicate
      ? (def, obj) =>
          def.plural === 'pods' && predicate(obj as Pod)
            ? new ApiError(
                403,
                'Forbidden',
                `admission webhook "${webhook}" denied the request: ${reason}`,
              )
            : undefined
      : undefined;
  }

  /** Makes the Eviction API answer 429 (as a PodDisruptionBudget would) for matching pods. */
  blockEvictions(
    predicate: ((pod: Pod) => boolean) | undefined,
    message = "Cannot evict pod as it would violate the pod's disruption budget.",
  ): void {
    this.cluster.api.evictionGuard = predicate
      ? (pod) => (predicate(pod) ? message : undefined)
      : undefined;
  }
}
