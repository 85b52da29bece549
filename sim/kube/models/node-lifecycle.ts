/**
 * kube-controller-manager's node lifecycle, taint manager and PodGC:
 * - a node whose kubelet stopped posting status goes Ready=Unknown after the grace period and
 *   gets the `unreachable` taints; its pods are marked not ready;
 * - after the pods' `unreachable` toleration (300 s) the taint manager deletes them
 *   (DisruptionTarget `DeletionByTaintManager`); with no kubelet they stay Terminating;
 * - PodGC force-deletes pods bound to a node that no longer exists (`DeletionByPodGC`).
 */
import { ApiError } from '../api/errors.js';
import { setCondition } from '../api/kube-api.js';
import { setDisruptionTarget } from '../api/object-utils.js';
import { isoTime, type Node, type Pod } from '../types.js';
import type { ModelContext } from './model-context.js';
import { isTerminal } from './pod-status.js';

export class NodeLifecycle {
  private readonly unsubscribe: () => void;

  constructor(
    private readonly ctx: ModelContext,
    private readonly kubeletUp: (node: string) => boolean,
  ) {
    this.unsubscribe = ctx.api.store.subscribe((ev) => {
      if (ev.resource === 'nodes' && ev.type === 'DELETED') {
        const name = ev.object.metadata.name as string;
        ctx.clock.after(ctx.timings.podGcDelayMs, `podgc ${name}`, () => this.podGc(name));
      }
    });
  }

  stop(): void {
    this.unsubscribe();
  }

  /** Called when a node's kubelet stops (power loss, instance terminated, shutdown done). */
  kubeletStopped(nodeName: string): void {
    this.ctx.clock.after(
      this.ctx.timings.nodeMonitorGracePeriodMs,
      `node-lifecycle ${nodeName}`,
      () => this.markUnknown(nodeName),
    );
  }

  private markUnknown(nodeName: string): void {
    const { api, clock } = this.ctx;
    if (this.kubeletUp(nodeName) || !api.tryGet('nodes', undefined, nodeName)) return;
    const now = clock.now();
    api.modify<Node>(
      'node-lifecycle-controller',
      'nodes',
      undefined,
      nodeName,
      (n) => {
        for (const type of ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure']) {
          setCondition(
            n,
            {
              type,
              status: 'Unknown',
              reason: 'NodeStatusUnknown',
              message: 'Kubelet stopped posting node status.',
            },
            now,
          );
        }
      },
      { subresource: 'status' },
    );
    api.modify<Node>('node-lifecycle-controller', 'nodes', undefined, nodeName, (n) => {
      const taints = (n.spec.taints ?? []).filter(
        (t) => t.key !== 'node.kubernetes.io/unreachable',
      );
      taints.push({
        key: 'node.kubernetes.io/unreachable',
        effect: 'NoSchedule',
        timeAdded: isoTime(now),
      });
      taints.push({
        key: 'node.kubernetes.io/unreachable',
        effect: 'NoExecute',
        timeAdded: isoTime(now),
      });
      n.spec.taints = taints;
    });
    const node = api.tryGet<Node>('nodes', undefined, nodeName);
    if (node)
      this.ctx.events.record(
        node,
        {
          type: 'Normal',
          reason: 'NodeNotReady',
          message: `Node ${nodeName} status is now: NodeNotReady`,
          component: 'node-controller',
        },
        'node-lifecycle-controller',
      );
    let longest = 0;
    for (const pod of this.podsOn(nodeName)) {
      if (isTerminal(pod)) continue;
      api.modify<Pod>(
        'node-lifecycle-controller',
        'pods',
        pod.metadata.namespace,
        pod.metadata.name as string,
        (p) => setCondition(p, { type: 'Ready', status: 'False', reason: 'NodeLost' }, now),
        { subresource: 'status' },
      );
      const toleration = pod.spec.tolerations?.find(
        (t) => t.key === 'node.kubernetes.io/unreachable' && t.effect === 'NoExecute',
      );
      const seconds = toleration ? (toleration.tolerationSeconds ?? Infinity) : 0;
      if (Number.isFinite(seconds)) longest = Math.max(longest, seconds);
    }
    clock.after(longest * 1000, `taint-manager ${nodeName}`, () => this.taintManager(nodeName));
  }

  private taintManager(nodeName: string): void {
    const { api } = this.ctx;
    if (this.kubeletUp(nodeName) || !api.tryGet('nodes', undefined, nodeName)) return;
    for (const pod of this.podsOn(nodeName)) {
      if (pod.metadata.deletionTimestamp || isTerminal(pod)) continue;
      const ns = pod.metadata.namespace;
      const name = pod.metadata.name as string;
      api.modify<Pod>(
        'taint-manager',
        'pods',
        ns,
        name,
        (p) =>
          setDisruptionTarget(
            p,
            'DeletionByTaintManager',
            'Taint manager: deleting due to NoExecute taint',
            this.ctx.clock.now(),
          ),
        { subresource: 'status' },
      );
      this.ctx.events.record(
        pod,
        {
          type: 'Normal',
          reason: 'TaintManagerEviction',
          message: `Marking for deletion Pod ${ns}/${name}`,
          component: 'taint-eviction-controller',
        },
        'taint-manager',
      );
      api.delete('taint-manager', 'pods', ns, name);
    }
  }

  /** PodGC for one deleted node. */
  podGc(nodeName: string): void {
    const { api, clock } = this.ctx;
    if (api.tryGet('nodes', undefined, nodeName)) return;
    for (const pod of this.podsOn(nodeName)) {
      const ns = pod.metadata.namespace;
      const name = pod.metadata.name as string;
      if (!isTerminal(pod)) {
        api.modify<Pod>(
          'pod-gc',
          'pods',
          ns,
          name,
          (p) => {
            setDisruptionTarget(p, 'DeletionByPodGC', 'PodGC: node no longer exists', clock.now());
            (p.status as { phase: string }).phase = 'Failed';
          },
          { subresource: 'status' },
        );
      }
      try {
        api.delete('pod-gc', 'pods', ns, name, { gracePeriodSeconds: 0 });
        this.ctx.log('pod-gc', 'Forced deletion of orphaned Pod succeeded', {
          pod: `${ns}/${name}`,
          node: nodeName,
        });
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 404)) throw e;
      }
    }
  }

  private podsOn(nodeName: string): Pod[] {
    return this.ctx.api.all<Pod>('pods').filter((p) => p.spec.nodeName === nodeName);
  }
}
